"""simpy model of InnoDB I/O: redo group commit, binlog 2PC, page cleaner, doublewrite."""

from .config import ServerConfig, ServerStart, Workload
from .flavors import FLAVORS, Flavor, get_flavor
from .results import SimResult, replicate, simulate

__all__ = ["FLAVORS", "Flavor", "ServerConfig", "ServerStart", "SimResult", "Workload",
           "get_flavor", "replicate", "simulate"]
