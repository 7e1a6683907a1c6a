"""Lab: real servers (local binaries, Docker), a workload, measured against predicted."""

from .clients import LoadRunner, WorkloadResult, run_workload
from .local import LocalServer, ServerError, ServerOptions, find_binaries
from .options import LabError, LabOptions
from .run import lab_run
from .workload import WorkloadError, WorkloadSpec

__all__ = ["LabError", "LabOptions", "LoadRunner", "LocalServer", "ServerError",
           "ServerOptions", "WorkloadError", "WorkloadResult", "WorkloadSpec", "find_binaries",
           "lab_run", "run_workload"]
