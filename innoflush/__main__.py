"""`python -m innoflush`: the same command as the installed `innoflush`."""

from .cli import main

main(prog_name="innoflush")
