"""A small sweep and advise's batched predictions, run in-process, in a pool and on Dask
(whose workers import this module by name: the repository's root is on their path)."""

from __future__ import annotations

import os
import time

from innoflush.advisor.fit import Fit
from innoflush.advisor.predict import Predictor
from innoflush.simulator import ServerConfig, Workload
from innoflush.simulator.sweep import combinations
from tests.helpers.simprofiles import consumer_ssd


def _slow_echo(x: int) -> tuple[int, int]:
    """The later items finish first: the order of the results is map's, not theirs."""
    time.sleep(0.02 * (5 - x % 5))
    return x, os.getpid()



def sweep_cases():
    return combinations(ServerConfig(flavor="mysql-8.0"), Workload(), ["O_DIRECT", "fsync"],
                        [1, 2], [1], [1, 4])



def flat(results) -> list:
    """A sweep's results as plain data: every figure of every run, and the summaries."""
    return [([r.to_dict() | {"internal": r.internal} for r in runs], summary)
            for runs, summary in results]



def advise_fit() -> Fit:
    return Fit(ServerConfig(flavor="mariadb-10.11", log_bin=False), Workload(connections=4),
               1000.0, None, True, 0.5, 0.0)



CHANGES = [{"innodb_flush_log_at_trx_commit": 2}, {"innodb_flush_method": "O_DIRECT"},
           {"innodb_flush_log_at_trx_commit": 0}]



def predictions(executor) -> list[dict]:
    p = Predictor(advise_fit(), consumer_ssd(), seed=3, duration_s=0.3, executor=executor)
    p.prefetch(CHANGES)
    return [p.predict(ch) for ch in CHANGES]

