"""Lab: real servers (local binaries; Docker later), workloads, measured against predicted."""

from .local import LocalServer, ServerError, ServerOptions, find_binaries

__all__ = ["LocalServer", "ServerError", "ServerOptions", "find_binaries"]
