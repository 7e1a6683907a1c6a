"""`python -m innoflush`: the same command as the installed `innoflush`."""

from .entry import main

main()
