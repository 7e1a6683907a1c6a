"""Statements run on a test's real server through its own connection."""

from __future__ import annotations


def sql(server, *statements: str) -> list:
    conn = server.connect()
    try:
        out = []
        with conn.cursor() as cur:
            for s in statements:
                cur.execute(s)
                out.append(cur.fetchall())
        return out
    finally:
        conn.close()

