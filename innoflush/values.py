"""Option values at their edges that more than one floor needs (the commands' click
types are built on them in innoflush/commands/option_types.py)."""

from __future__ import annotations

# numpy's legacy seed range (RandomState): a seed that works with every generator of
# the model and the lab, and reads the same in a report
SEED_MAX = 2**32 - 1

__all__ = ["SEED_MAX"]
