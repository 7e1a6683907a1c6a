"""What a lab run is asked to do (``LabOptions``), the runs it plans (``RunPlan``: one per
combination of flush method × trx_commit × sync_binlog × connections), and how one
fails (``LabError``)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from ...errors import InnoflushError, OptionError, UsageError, option_values
from ...simulator.flavors import FLUSH_METHODS
from ...units import parse_size
from ...values import SEED_MAX
from ..load.command_spec import WorkloadCommand
from ..load.workload import KINDS, WorkloadSpec
from ..server.backend import ServerError
from ..server.local import port_in_use
from ..server.server_binaries import find_binaries
from ..server.server_root import ServerRoot

BACKENDS = ("local", "docker")


class LabError(InnoflushError):
    """A lab run failed (server, workload, sampling); carries the cause's exit code."""

    def __init__(self, msg: str, exit_code: int = 1):
        super().__init__(msg)
        self.exit_code = exit_code


@dataclass
class LabOptions:
    backend: str = "local"
    image: str | None = None
    basedir: str | None = None
    server_root: str | None = None    # a Debian root to run the server in (server_root.py)
    flush_methods: list[str] = field(default_factory=lambda: ["O_DIRECT"])
    trx_commits: list[int] = field(default_factory=lambda: [1])
    sync_binlogs: list[int | None] = field(default_factory=lambda: [None])
    log_bin: bool = False
    connections: list[int] = field(default_factory=lambda: [1])
    duration_s: float = 10.0
    warmup_s: float = 0.0
    settle_s: float = 0.0        # see WorkloadSpec.settle_s (lab validate --settle-after)
    workload: str = "insert"
    rows_per_trx: tuple[int, int] = (1, 10)
    datadir_on: str | None = None
    profile_ref: str | None = None
    measure: bool = False
    buffer_pool: str = "256M"
    port: int | None = None
    extra: dict = field(default_factory=dict)
    advise: bool = True
    seed: int = 1
    emulate: str | None = None        # a device profile to emulate (lab/emulation/emulate.py)
    emulate_channels: int = 1         # 1: one cache-flush channel, as the model
    workload_ref: str | None = None   # a workload profile to predict with (lab calibrate)
    preload_rows: int | None = None   # rows loaded before a run (None: the workload's 10,000)
    watch_extensions: bool = False    # poll the InnoDB files' sizes: the extension step
    command: WorkloadCommand | None = None   # the user's load generator (--workload-cmd)

    def validate(self) -> None:
        if self.backend not in BACKENDS:
            raise OptionError(f"--backend must be {' or '.join(BACKENDS)} (got {self.backend!r})")
        if self.backend == "local" and self.image:
            raise OptionError("--image is for --backend docker")
        if self.backend == "docker" and self.basedir:
            raise OptionError("--basedir is for --backend local")
        if self.backend == "docker" and self.server_root:
            raise UsageError("--server-root is for --backend local (the image is the "
                             "server's root with --backend docker)")
        if self.basedir and self.server_root:
            raise UsageError("--basedir and --server-root: give one (the server inside a "
                             "root is found there)")
        if self.server_root:
            ServerRoot(self.server_root).check()
        if self.backend == "local" and self.basedir and not self.server_root:
            check_basedir(self.basedir)
        if not 0 <= self.seed <= SEED_MAX:
            raise OptionError(f"--seed {self.seed}: must be between 0 and {SEED_MAX}")
        for m in self.flush_methods:
            if m not in FLUSH_METHODS:
                raise OptionError(f"--flush-method {m!r}: choose from {', '.join(FLUSH_METHODS)} "
                                 "(the methods the model simulates)")
        for t in self.trx_commits:
            if t not in (0, 1, 2):
                raise OptionError(f"--trx-commit {t}: use 0, 1 or 2")
        for s in self.sync_binlogs:
            if s is not None and s < 0:
                raise OptionError(f"--sync-binlog {s}: must be 0 or more")
        for c in self.connections:
            if not 1 <= c <= 1024:
                raise OptionError(f"--connections {c}: must be between 1 and 1024")
        if not 1 <= self.duration_s <= 3600:
            raise OptionError(f"--duration must be between 1 and 3600 s (got {self.duration_s:g})")
        if not 0 <= self.warmup_s <= 3600:
            raise OptionError(f"--warmup must be between 0 and 3600 s (got {self.warmup_s:g})")
        if self.settle_s and self.command is None:
            raise OptionError("settling the checkpoint age (--settle-after) needs "
                             "--workload-cmd")
        if self.workload not in KINDS:
            raise OptionError(f"--workload must be {' or '.join(KINDS)}")
        if self.profile_ref and self.measure:
            raise OptionError("give --profile or --measure, not both")
        if self.emulate_channels not in (0, 1):
            raise OptionError("emulate channels must be 0 (independent) or 1 (one flush "
                             "channel)")
        if self.port is not None and not 0 < self.port < 65536:
            raise OptionError(f"--port {self.port} is out of range")
        if self.port is not None and port_in_use(self.port):
            raise UsageError(f"--port {self.port} on 127.0.0.1 is in use: choose another "
                             "port or leave --port out to get a free one")
        # InnoDB with 16k pages refuses to start below 6 MiB, the model below 8 MiB
        if parse_size(self.buffer_pool) < 8 * 2**20:
            raise OptionError(f"--buffer-pool {self.buffer_pool}: at least 8M (InnoDB "
                              "does not start below 6M)")
        spec = self.spec(self.connections[0])
        with option_values():   # --rows-per-trx, --preload-rows: the options' values
            spec.validate()
        if self.command is not None:
            self.command.validate()
            if self.backend != "local" and "socket" in self.command.placeholders():
                raise OptionError("{socket}: the docker backend's server has no socket on "
                                 "this host; use {host} and {port}")

    def spec(self, connections: int) -> WorkloadSpec:
        extra = {} if self.preload_rows is None else {"preload_rows": self.preload_rows}
        return WorkloadSpec(kind=self.workload, connections=connections,
                            duration_s=self.duration_s, warmup_s=self.warmup_s,
                            settle_s=self.settle_s,
                            rows_per_trx=tuple(self.rows_per_trx),
                            seed=self.seed, **extra)


def check_basedir(basedir: str) -> None:
    """--basedir holds a server the lab can run (exit 2 before anything runs: it is the
    user's path, not a failure of the run)."""
    try:
        find_binaries(basedir)
    except ServerError as exc:
        why = str(exc)
        if why.startswith("no mariadbd or mysqld"):
            why = "no mariadbd or mysqld in it, nor in its bin/, sbin/ or libexec/"
        raise OptionError(f"--basedir {basedir}: {why}") from None


@dataclass(frozen=True)
class RunPlan:
    index: int
    total: int
    flush_method: str
    trx_commit: int
    sync_binlog: int | None
    connections: int

    @property
    def commits_sleep(self) -> bool:
        """Whether a commit waits for a sync (and its threads go to sleep)."""
        return self.trx_commit == 1 or bool(self.sync_binlog)

    @property
    def label(self) -> str:
        s = f"{self.flush_method}, trx_commit={self.trx_commit}"
        if self.sync_binlog is not None:
            s += f", sync_binlog={self.sync_binlog}"
        return s + f", {self.connections} conn"

    def requested(self, opts: LabOptions) -> dict:
        return {"innodb_flush_method": self.flush_method,
                "innodb_flush_log_at_trx_commit": self.trx_commit,
                "log_bin": opts.log_bin, "sync_binlog": self.sync_binlog,
                "innodb_buffer_pool_size": opts.buffer_pool, "connections": self.connections,
                "extra": dict(opts.extra)}


def plan_runs(opts: LabOptions) -> list[RunPlan]:
    combos = list(itertools.product(opts.flush_methods, opts.trx_commits, opts.sync_binlogs,
                                    opts.connections))
    return [RunPlan(i + 1, len(combos), m, t, s, c) for i, (m, t, s, c) in enumerate(combos)]



__all__ = ["BACKENDS", "LabError", "LabOptions", "RunPlan", "plan_runs"]
