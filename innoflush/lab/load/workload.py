"""The lab's workloads: what the client processes (lab/load/clients.py) run, and the table
they run it on.

Two workloads, each on a table of its own in database ``innoflush_lab``:

- ``insert`` — in the spirit of the Insert Benchmark: table ``ib`` with an auto-increment
  primary key and three secondary indexes (``(price, customer_id)``,
  ``(cash_register, price)``, ``(ts, customer_id)``: two random, one append-only). Each
  transaction is one multi-row INSERT of ``rows_per_trx`` rows (uniform in a range, 1..10
  by default) and a COMMIT: 2 round trips.
- ``oltp`` — a short write mix on a preloaded table ``sbtest`` (sysbench's shape: id, an
  indexed ``k``, ``c``, ``pad``): per transaction ``updates_per_trx`` point UPDATEs by
  primary key (alternately on the indexed ``k`` and on ``c``), one DELETE and one INSERT
  of the same id (the table keeps its size), and a COMMIT. Connection *i* works only on
  the ids ≡ i (mod N), so connections never wait for each other's row locks: the run
  measures the I/O path, not lock contention.

``WorkloadSpec`` says which, how many connections, for how long; ``prepare`` creates
the table and preloads it (in the parent, before the measured run); ``transactions``
gives a connection's statements, one transaction per call.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import asdict, dataclass

from ...errors import InnoflushError, UsageError

KINDS = ("insert", "oltp")
DATABASE = "innoflush_lab"
INSERT_TABLE = "ib"
OLTP_TABLE = "sbtest"


class WorkloadError(InnoflushError):
    """The load generator could not run (a client could not connect, ...)."""


@dataclass(frozen=True)
class WorkloadSpec:
    kind: str = "insert"
    connections: int = 1
    duration_s: float = 10.0
    warmup_s: float = 0.0                     # run, not measured, before the duration
    # after the warm-up, at most this long until the page cleaner is at work (an
    # external command only: lab/load/external.py CommandLoad.settle)
    settle_s: float = 0.0
    rows_per_trx: tuple[int, int] = (1, 10)   # insert: rows per transaction, uniform
    updates_per_trx: int = 4                  # oltp: point UPDATEs per transaction
    preload_rows: int = 10_000                # rows loaded before the run
    pad_bytes: int = 100                      # bytes of filler per row
    max_trx_per_connection: int = 2_000_000   # count bound (and memory: 24 B per trx)
    database: str = DATABASE
    seed: int = 1
    ready_timeout_s: float = 60.0
    grace_s: float = 30.0

    def validate(self) -> None:
        if self.kind not in KINDS:
            raise UsageError(f"unknown workload {self.kind!r}: choose {' or '.join(KINDS)}")
        if self.connections < 1 or self.connections > 1024:
            raise UsageError(f"connections must be between 1 and 1024 (got {self.connections})")
        if not 0 < self.duration_s <= 86_400:
            raise UsageError(f"duration must be above 0 and at most a day "
                             f"(got {self.duration_s:g} s)")
        if not 0 <= self.warmup_s <= 86_400:
            raise UsageError(f"warm-up must be 0 or more, at most a day "
                             f"(got {self.warmup_s:g} s)")
        if not 0 <= self.settle_s <= 3600:
            raise UsageError(f"the settling must be between 0 and 3600 s "
                             f"(got {self.settle_s:g} s)")
        lo, hi = self.rows_per_trx
        if lo < 1 or hi < lo or hi > 10_000:
            raise UsageError(f"rows per transaction must be 1 <= min <= max <= 10000 "
                             f"(got {lo}..{hi})")
        if self.updates_per_trx < 0 or self.updates_per_trx > 1000:
            raise UsageError("updates per transaction must be between 0 and 1000")
        if self.preload_rows < 0:
            raise UsageError("preload rows must be >= 0")
        if self.kind == "oltp" and self.preload_rows < self.connections:
            raise UsageError("the oltp workload needs at least one preloaded row per "
                             "connection")
        if not 0 <= self.pad_bytes <= 4000:
            raise UsageError("pad bytes must be between 0 and 4000")
        if self.max_trx_per_connection < 1:
            raise UsageError("max transactions per connection must be >= 1")

    @property
    def statements_per_trx(self) -> int:
        """Round trips per transaction, COMMIT included."""
        if self.kind == "insert":
            return 2
        return self.updates_per_trx + 3

    def describe(self) -> str:
        if self.kind == "insert":
            lo, hi = self.rows_per_trx
            rows = f"{lo}" if lo == hi else f"{lo}..{hi}"
            return (f"insert: {rows} rows per transaction into {INSERT_TABLE} (auto-increment "
                    "PK + 3 secondary indexes), one COMMIT each")
        return (f"oltp: {self.updates_per_trx} point UPDATEs + DELETE + INSERT per "
                f"transaction on {OLTP_TABLE} ({self.preload_rows:,} rows), one COMMIT each")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["rows_per_trx"] = list(self.rows_per_trx)
        d["statements_per_trx"] = self.statements_per_trx
        for k in ("ready_timeout_s", "grace_s"):
            d.pop(k)
        return d


# ---- schema and preload (in the parent, before the measured run) ------------------------

_ALNUM = string.ascii_letters + string.digits


def _filler(rng: random.Random, n: int) -> str:
    return "".join(rng.choices(_ALNUM, k=n))


def schema_sql(spec: WorkloadSpec) -> list[str]:
    db = spec.database
    if spec.kind == "insert":
        return [f"CREATE DATABASE IF NOT EXISTS `{db}`",
                f"CREATE TABLE `{db}`.`{INSERT_TABLE}` ("
                "id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, "
                "ts DATETIME(6) NOT NULL, cash_register INT NOT NULL, "
                "customer_id INT NOT NULL, product_id INT NOT NULL, price INT NOT NULL, "
                f"data VARCHAR({max(1, spec.pad_bytes)}) NOT NULL, "
                "KEY price_customer (price, customer_id), "
                "KEY register_price (cash_register, price), "
                "KEY ts_customer (ts, customer_id)) ENGINE=InnoDB"]
    return [f"CREATE DATABASE IF NOT EXISTS `{db}`",
            f"CREATE TABLE `{db}`.`{OLTP_TABLE}` ("
            "id INT NOT NULL PRIMARY KEY, k INT NOT NULL DEFAULT 0, "
            "c CHAR(120) NOT NULL DEFAULT '', "
            f"pad CHAR({max(1, min(255, spec.pad_bytes))}) NOT NULL DEFAULT '', "
            "KEY k (k)) ENGINE=InnoDB"]


def _insert_values(rng: random.Random, n: int, filler: str) -> str:
    vals = []
    for _ in range(n):
        off = rng.randrange(len(filler) // 2 + 1)
        vals.append(f"(NOW(6),{rng.randrange(1000)},{rng.randrange(100_000)},"
                    f"{rng.randrange(10_000)},{rng.randrange(1_000_000)},"
                    f"'{filler[off:off + len(filler) // 2]}')")
    return ",".join(vals)


def prepare(conn, spec: WorkloadSpec, batch: int = 1000) -> None:
    """Create the workload's database and table and preload rows (conn: PyMySQL)."""
    spec.validate()
    rng = random.Random(spec.seed)
    filler = _filler(rng, max(2, 2 * spec.pad_bytes))
    with conn.cursor() as cur:
        for sql in schema_sql(spec):
            cur.execute(sql)
        done = 0
        while done < spec.preload_rows:
            n = min(batch, spec.preload_rows - done)
            if spec.kind == "insert":
                cur.execute(f"INSERT INTO `{spec.database}`.`{INSERT_TABLE}` "
                            "(ts, cash_register, customer_id, product_id, price, data) "
                            f"VALUES {_insert_values(rng, n, filler)}")
            else:
                rows = ",".join(
                    f"({i},{rng.randrange(1_000_000)},'{filler[:60]}',"
                    f"'{filler[:min(255, spec.pad_bytes)]}')"
                    for i in range(done + 1, done + n + 1))
                cur.execute(f"INSERT INTO `{spec.database}`.`{OLTP_TABLE}` (id, k, c, pad) "
                            f"VALUES {rows}")
            done += n
        cur.execute("COMMIT")



# ---- a client's transactions ------------------------------------------------------------

def _txn_insert(spec: WorkloadSpec, rng: random.Random, filler: str):
    lo, hi = spec.rows_per_trx
    head = (f"INSERT INTO `{spec.database}`.`{INSERT_TABLE}` "
            "(ts, cash_register, customer_id, product_id, price, data) VALUES ")

    def statements() -> list[str]:
        return [head + _insert_values(rng, rng.randint(lo, hi), filler)]
    return statements


def _txn_oltp(spec: WorkloadSpec, rng: random.Random, filler: str, idx: int):
    n = spec.connections
    table = f"`{spec.database}`.`{OLTP_TABLE}`"
    count = (spec.preload_rows - idx + n - 1) // n   # ids idx+1, idx+1+n, ... <= preload

    def pick() -> int:
        return idx + 1 + n * rng.randrange(count)

    def statements() -> list[str]:
        out = []
        for u in range(spec.updates_per_trx):
            if u % 2 == 0:
                out.append(f"UPDATE {table} SET k=k+1 WHERE id={pick()}")
            else:
                off = rng.randrange(len(filler) // 2 + 1)
                out.append(f"UPDATE {table} SET c='{filler[off:off + 60]}' "
                           f"WHERE id={pick()}")
        i = pick()
        out.append(f"DELETE FROM {table} WHERE id={i}")
        out.append(f"INSERT INTO {table} (id, k, c, pad) VALUES "
                   f"({i},{rng.randrange(1_000_000)},'{filler[:60]}',"
                   f"'{filler[:min(255, spec.pad_bytes)]}')")
        return out
    return statements


def transactions(spec: WorkloadSpec, idx: int) -> Callable[[], list[str]]:
    """The statements of client `idx`'s transactions (COMMIT not included), a new
    transaction's at every call; seeded by the spec's seed and the client's index."""
    rng = random.Random(spec.seed * 1_000_003 + idx)
    filler = _filler(rng, max(2, 2 * spec.pad_bytes))
    if spec.kind == "insert":
        return _txn_insert(spec, rng, filler)
    return _txn_oltp(spec, rng, filler, idx)


__all__ = ["DATABASE", "INSERT_TABLE", "KINDS", "OLTP_TABLE", "WorkloadError", "WorkloadSpec",
           "prepare", "schema_sql", "transactions"]
