"""A scripted server: answers the advisor's statements from a fixture (a PyMySQL-like
connection) for exit codes, privileges and interruptions no real server gives on cue."""

from __future__ import annotations

import pymysql


class FakeCursor:
    def __init__(self, server, as_dicts):
        self.server = server
        self.as_dicts = as_dicts
        self.rows = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def execute(self, sql, args=None):
        self.server.sent.append(sql)
        self.rows = self.server.answer(sql, args, self.as_dicts)

    def fetchall(self):
        return self.rows



class FakeServer:
    """Answers the advisor's statements from a fixture; a PyMySQL-like connection."""

    def __init__(self, fx, statuses=None, status_error=None, replica_error=None,
                 variables=None, interrupt_after=None):
        self.fx = fx
        self.variables = dict(variables if variables is not None else fx["variables"])
        self.statuses = list(statuses or [fx["status_start"], fx["status_end"]])
        self.status_error = status_error
        self.replica_error = replica_error
        self.sent: list[str] = []
        self.closed = False

    def cursor(self, cls=None):
        return FakeCursor(self, cls is not None)

    def close(self):
        self.closed = True

    def answer(self, sql, args, as_dicts):
        if sql == "SHOW GLOBAL VARIABLES":
            return [(k, v) for k, v in self.variables.items()
                    if k not in ("version", "version_comment")]
        if sql.startswith("SELECT VERSION()"):
            return [(self.variables.get("version", ""), self.variables.get("version_comment"))]
        if sql in ("SHOW REPLICA STATUS", "SHOW SLAVE STATUS", "SHOW ALL SLAVES STATUS"):
            if self.replica_error:
                raise pymysql.err.OperationalError(*self.replica_error)
            return list(self.fx.get("replica_status", []))
        if "information_schema.SYSTEM_VARIABLES" in sql:
            return []
        if sql == "SHOW GLOBAL STATUS":
            if self.status_error:
                raise pymysql.err.OperationalError(*self.status_error)
            st = self.statuses.pop(0) if len(self.statuses) > 1 else self.statuses[0]
            return list(st.items())
        if sql.startswith("SHOW GLOBAL STATUS WHERE"):
            return [("Threads_running", self.fx["polls"]["Threads_running"][0])]
        # the workload probe: a fake has no performance_schema and no other connections
        if sql == "SELECT CONNECTION_ID()":
            return [(1,)]
        if sql == "SELECT @@performance_schema":
            return [(0,)]
        if sql == "SHOW FULL PROCESSLIST":
            return []
        if sql.startswith("SHOW GLOBAL STATUS LIKE"):
            if args and args[0] == "Threads_connected":   # consistent with the empty list
                return [("Threads_connected", "1")]
            st = self.statuses[0]
            return [(args[0], st[args[0]])] if args and args[0] in st else []
        if sql.startswith("SELECT ID, TID FROM information_schema.PROCESSLIST"):
            return []
        raise AssertionError(f"unexpected statement {sql!r}")

