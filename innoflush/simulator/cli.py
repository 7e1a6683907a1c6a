"""`innoflush simulate` and `innoflush tps` (placeholder)."""

import click


@click.command("simulate")
def simulate_command() -> None:
    """Simulate InnoDB on a device profile."""
    raise click.ClickException("not implemented yet")


@click.command("tps")
def tps_command() -> None:
    """Max durable commits per second per connection for a device."""
    raise click.ClickException("not implemented yet")
