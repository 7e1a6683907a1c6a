"""simpy model of InnoDB I/O: redo group commit, binlog 2PC, page cleaner, doublewrite."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .config import ServerConfig, ServerStart, Workload
from .flavors import FLAVORS, Flavor, get_flavor

# The model itself (simpy, numpy) is imported when first asked for: the configuration
# above is all `innoflush simulate --help` and the advisor's option parsing need.
if TYPE_CHECKING:
    from .results import SimResult, replicate, simulate

_FROM_RESULTS = ("SimResult", "replicate", "simulate")

__all__ = ["FLAVORS", "Flavor", "ServerConfig", "ServerStart", "SimResult", "Workload",
           "get_flavor", "replicate", "simulate"]


def __getattr__(name: str) -> Any:
    if name in _FROM_RESULTS:
        from . import results
        return getattr(results, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
