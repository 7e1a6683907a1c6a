"""simpy model of InnoDB I/O: redo group commit, binlog 2PC, page cleaner, doublewrite."""

from .config import ServerConfig, Workload
from .flavors import FLAVORS, Flavor, get_flavor
from .results import SimResult, replicate, simulate

__all__ = ["FLAVORS", "Flavor", "ServerConfig", "SimResult", "Workload", "get_flavor",
           "replicate", "simulate"]
