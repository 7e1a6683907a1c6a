"""Lab: real servers (local binaries, Docker), a workload, measured against predicted."""

from .local import LocalServer, ServerError, ServerOptions, find_binaries
from .run import LabError, LabOptions, lab_run
from .workload import LoadRunner, WorkloadError, WorkloadResult, WorkloadSpec, run_workload

__all__ = ["LabError", "LabOptions", "LoadRunner", "LocalServer", "ServerError",
           "ServerOptions", "WorkloadError", "WorkloadResult", "WorkloadSpec", "find_binaries",
           "lab_run", "run_workload"]
