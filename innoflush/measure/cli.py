"""`innoflush measure` (placeholder until the probe lands)."""

import click


@click.command("measure")
@click.argument("path")
def measure_command(path: str) -> None:
    """Measure write and sync latency of the storage under directory PATH."""
    raise click.ClickException("not implemented yet")
