"""`python -m innoflush`: the same command as the installed `innoflush`."""

from .commands.entry import main

main()
