"""What a lab server backend provides, whichever way it runs the server, and the error
either raises when its server cannot be set up, started or stopped.

Two backends start a fresh server with the given settings and always stop and remove it:
``LocalServer`` (binaries on this host, lab/server/local.py) and ``DockerServer`` (a container
through the Docker SDK, lab/server/docker_backend.py). Code that drives a server — workload,
status sampling, advise — uses only this surface.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from ...errors import InnoflushError


class ServerError(InnoflushError):
    """The local server could not be set up, started or stopped."""


@runtime_checkable
class LabServer(Protocol):
    HOST: str                 # address to connect to (127.0.0.1)
    port: int | None          # TCP port, once started
    datadir: Path             # on the host: where the server's files are (the measured storage)

    @property
    def flavor(self) -> str: ...            # "mariadb" or "mysql"

    @property
    def version(self) -> tuple[int, ...]: ...

    def start(self) -> LabServer: ...        # returns once the server accepts connections

    def stop(self) -> None: ...              # idempotent; also removes what start created

    def is_running(self) -> bool: ...

    def connect(self, user: str = "root", password: str = "", **kw): ...  # a PyMySQL conn

    def server_pid(self) -> int | None: ...  # host PID of mysqld/mariadbd (CPU accounting)

    def error_log_tail(self, lines: int = 15) -> str: ...

    def __enter__(self) -> LabServer: ...

    def __exit__(self, *exc) -> None: ...
