"""Lab: real servers (local binaries, Docker), a workload, measured against predicted."""

from .experiments.options import LabError, LabOptions
from .experiments.run import lab_run
from .load.clients import LoadRunner, run_workload
from .load.workload import WorkloadError, WorkloadSpec
from .load.workload_result import WorkloadResult
from .server.backend import ServerError
from .server.local import LocalServer, ServerOptions
from .server.server_binaries import find_binaries

__all__ = ["LabError", "LabOptions", "LoadRunner", "LocalServer", "ServerError",
           "ServerOptions", "WorkloadError", "WorkloadResult", "WorkloadSpec", "find_binaries",
           "lab_run", "run_workload"]
