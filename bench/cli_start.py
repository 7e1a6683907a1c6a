"""Benchmark: how long `innoflush` takes to start, beside `python -c pass` (the floor).

Times `innoflush --help`, `innoflush profiles list` and `innoflush simulate --help` as new
processes, each run as the installed `innoflush` script runs it (`from innoflush.commands.entry
import main`; older trees: `innoflush.entry`, before that `innoflush.cli`),
and prints min / median / max of the runs in ms. Several source trees can be timed side
by side in one run, each on its own PYTHONPATH (e.g. main's code beside a branch's);
rounds go through every command and tree in turn, the trees' order rotating,
so a shared, noisy machine slows them alike. Target: `innoflush --help` ≤ 80 ms median.

    python bench/cli_start.py [NAME=DIR ...] [--runs N] [--no-bytecode-cache]

DIR is a checkout (the directory holding the `innoflush` package); the default is this
one. By default the compiled bytecode is cached, as it is in an installed package: in a
temporary directory of the bench's own (PYTHONPYCACHEPREFIX, nothing is written into the
trees), filled by one untimed run of each command first. --no-bytecode-cache compiles
every module of the tree at each start instead (PYTHONDONTWRITEBYTECODE, as the test
suite runs in an environment that sets it).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
TARGET_MS = 80.0
# what the installed `innoflush` script does
ENTRY = ("import sys\n"
         "try:\n    from innoflush.commands.entry import main\n"
         "except ImportError:\n"
         "    try:\n        from innoflush.entry import main\n"
         "    except ImportError:\n        from innoflush.cli import main\n"
         "sys.argv[0] = 'innoflush'; sys.exit(main())")
CASES: list[tuple[str, list[str]]] = [
    ("python -c pass", ["-c", "pass"]),
    ("python -c 'import click'", ["-c", "import click"]),
    ("innoflush --help", ["-c", ENTRY, "--help"]),
    ("innoflush profiles list", ["-c", ENTRY, "profiles", "list"]),
    ("innoflush simulate --help", ["-c", ENTRY, "simulate", "--help"]),
]


def _tree(spec: str) -> tuple[str, Path]:
    name, sep, directory = spec.partition("=")
    path = Path(directory if sep else spec).expanduser().resolve()
    if not (path / "innoflush" / "__init__.py").is_file():
        raise SystemExit(f"cli_start: {path} holds no innoflush package")
    return (name if sep else path.name), path


def _env(tree: Path, cache: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    env["PYTHONPATH"] = str(tree)
    if cache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env["PYTHONPYCACHEPREFIX"] = cache
    return env


def _cpu_s() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def _run_ms(argv: list[str], tree: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) ms of one start."""
    c0 = _cpu_s()
    t0 = time.perf_counter()
    # cwd: the tree, so that the '' -c puts first on sys.path is that tree too
    proc = subprocess.run([sys.executable, *argv], cwd=tree, env=env, capture_output=True)
    elapsed = (time.perf_counter() - t0) * 1000, (_cpu_s() - c0) * 1000
    if proc.returncode != 0 or (argv[1] == ENTRY and not proc.stdout):
        raise SystemExit(f"cli_start: {' '.join(argv[2:])} failed in {tree} "
                         f"(exit {proc.returncode}): {proc.stderr.decode()[-500:]}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs="*", metavar="NAME=DIR",
                    help="checkouts to time side by side (default: this one)")
    ap.add_argument("--runs", type=int, default=10, help="timed runs of each (default 10)")
    ap.add_argument("--no-bytecode-cache", action="store_true",
                    help="compile the tree's modules at every start")
    args = ap.parse_args(argv)
    trees = [_tree(t) for t in args.trees] or [("this", HERE)]
    if len({name for name, _ in trees}) != len(trees):
        raise SystemExit("cli_start: give each tree its own NAME")

    with tempfile.TemporaryDirectory(prefix="innoflush-pycache-") as cache_dir:
        envs = {}
        for name, path in trees:
            cache = None if args.no_bytecode_cache else os.path.join(cache_dir, name)
            envs[name] = _env(path, cache)
        for name, path in trees:          # untimed: fills the bytecode cache, checks each
            for _, case in CASES:
                _run_ms(case, path, envs[name])
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for r in range(args.runs):
            for label, case in CASES:
                for i in range(len(trees)):
                    name, path = trees[(r + i) % len(trees)]
                    times.setdefault((label, name), []).append(_run_ms(case, path, envs[name]))

    mode = "no bytecode cache" if args.no_bytecode_cache else "bytecode cached"
    print(f"{args.runs} runs each, {mode}, Python {sys.version.split()[0]}; "
          "wall ms: min / median / max, and the median CPU ms (user + system) beside")
    width = max(len(label) for label, _ in CASES)
    for label, _ in CASES:
        for name, _ in trees:
            wall = [w for w, _ in times[(label, name)]]
            cpu = [c for _, c in times[(label, name)]]
            print(f"  {label:<{width}}  {name:<12} {min(wall):7.1f} "
                  f"{statistics.median(wall):7.1f} {max(wall):7.1f}   "
                  f"CPU {statistics.median(cpu):7.1f}")
    for name, _ in trees:
        median = statistics.median(w for w, _ in times[("innoflush --help", name)])
        verdict = "meets" if median <= TARGET_MS else "misses"
        print(f"{name}: innoflush --help median {median:.1f} ms {verdict} the target "
              f"(<= {TARGET_MS:.0f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
