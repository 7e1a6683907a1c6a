"""Option values checked where they are typed: click types the commands share.

A value click refuses is a usage error of click's own, one line ending
``(see 'innoflush CMD --help')``, before the command does any work — a seed of -1 used
to reach numpy only after a lab run had started its servers."""

from __future__ import annotations

import click

# numpy's legacy seed range (RandomState): a seed that works with every generator of
# the model and the lab, and reads the same in a report
SEED_MAX = 2**32 - 1
SEED = click.IntRange(0, SEED_MAX)

__all__ = ["SEED", "SEED_MAX"]
