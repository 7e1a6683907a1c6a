"""`innoflush profiles ...` (placeholder)."""

import click


@click.group("profiles")
def profiles_group() -> None:
    """List, show, compare, import and export device profiles."""
