"""Bad input across every command, run as a user runs it: `python -m innoflush ...` in a
process of its own, with a fresh HOME and profile store, in an empty working directory.

Each row: the arguments, the exit code the command's page documents, and a piece of the
error line. Every row must give exactly one non-empty line on stderr starting
`innoflush: error:`, nothing on stdout, no traceback, and leave every directory it was
given (and the working directory, the home and the temporary directory) as it found them.
A lab server that does not start is the one documented exception to the single line
(docs/commands/lab-run.md, Exit codes): it is tested on its own against a real server.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytestmark = pytest.mark.processes

ROOT = Path(__file__).resolve().parents[2]
BUILTIN = ROOT / "innoflush" / "profiles" / "builtin" / "samsung-990-pro.json"
SP = ["--profile", "samsung-990-pro"]


def _bad_profiles() -> dict[str, str]:
    """File name -> text: a valid profile, and the same broken one way each."""
    good = json.loads(BUILTIN.read_text())
    good["name"] = "mine"

    synced = next(i for i, t in enumerate(good["tests"]) if "sync" in t)

    def broken(set_value) -> str:
        d = copy.deepcopy(good)
        set_value(d["tests"][synced]["sync"])
        return json.dumps(d)

    def sync_p50(value):
        def f(sync):
            sync["p50_ns"] = value
        return f

    def drop_mean(sync):
        del sync["mean_ns"]

    return {
        "good.json": json.dumps(good),
        "zero.json": broken(sync_p50(0)),
        "huge.json": broken(sync_p50(1e300)),
        "nan.json": broken(sync_p50(float("nan"))),         # json writes NaN, Python reads it
        "no-mean.json": broken(drop_mean),
        "not-json.json": '{"schema": "innoflush.device-profile/1", "tests": [',
        # advise --inventory: one with no hosts, one with a host (port 1: never reached)
        "empty-inventory.ini": "# no hosts yet\n[db]\n",
        "one-host.txt": "127.0.0.1:1\n",
        # ---- bounded input files (issue 44) ----
        "deep.json": "[" * 100_000 + "]" * 100_000,
        "deep-inventory.yml": "[" * 100_000 + "]" * 100_000,
        "long-number.json": '{"schema": ' + "7" * 5000 + "}",
        # ---- values at the edge (issue 44) ----
        "port-not-number.ini": "[db]\ndb1:x\n",
        "three-colons.ini": "[db]\na:b:c\n",
        "port-out-of-range.ini": "[db]\n127.0.0.1:70000\n",
        "big-range.ini": "[db]\nh[0:999999]\n",
        "big-range.yml": "all:\n  hosts:\n    h[0:99999]:\n",
        "two-ranges.ini": "[db]\nh[0:99][0:99]\n",
        "4097-hosts.ini": "[db]\nh[0:4095]\none-more\n",
    }


# (id, argv, exit code, a piece of the error line); placeholders: {cwd} the working
# directory, {inputs} the directory of the files above, {port} a port nothing listens
# on, {ro} a read-only filesystem, {shm} a tmpfs
ROWS = [
    # ---- the top level and click's own checks, in every group ----
    ("unknown-command", ["frobnicate"], 2, "no such command 'frobnicate' (see 'innoflush --help')"),
    ("unknown-top-option", ["--frob"], 2, "no such option '--frob'"),
    ("profiles-unknown-subcommand", ["profiles", "frob"], 2,
     "(see 'innoflush profiles --help')"),
    ("lab-unknown-subcommand", ["lab", "frob"], 2, "(see 'innoflush lab --help')"),
    ("lab-run-unknown-option", ["lab", "run", "--frob"], 2,
     "no such option '--frob' (see 'innoflush lab run --help')"),
    ("profiles-list-unknown-option", ["profiles", "list", "--csv"], 2,
     "(see 'innoflush profiles list --help')"),
    # ---- measure ----
    ("measure-missing-path", ["measure"], 2,
     "missing argument 'PATH' (see 'innoflush measure --help')"),
    ("measure-bad-choice", ["measure", "{cwd}", "--direct", "sideways"], 2,
     "'sideways' is not one of 'both', 'on', 'off'"),
    ("measure-nonexistent-dir", ["measure", "{cwd}/nope"], 2, "no such directory"),
    ("measure-file-not-dir", ["measure", "{inputs}/good.json"], 2, "is a regular file"),
    ("measure-proc", ["measure", "/proc"], 2, "proc pseudo-filesystem"),
    ("measure-read-only", ["measure", "{ro}"], 2, "read-only filesystem"),
    ("measure-prom-missing-dir", ["measure", "{cwd}", "--prom", "{cwd}/nope/m.prom"], 2,
     "m.prom: no such directory"),
    ("measure-prom-read-only", ["measure", "{cwd}", "--prom", "{ro}/m.prom"], 2,
     "is not writable"),
    ("measure-1k-direct-on", ["measure", "{cwd}", "--sizes", "1k", "--direct", "on"], 2,
     "no test to run: O_DIRECT needs write sizes that are multiples of 4096"),
    ("measure-tmpfs-direct-unaligned",
     ["measure", "{shm}", "--sizes", "1k,6k", "--direct", "on"], 2, "1k, 6k are not"),
    ("measure-unparseable-size", ["measure", "{cwd}", "--sizes", "16q"], 2,
     "--sizes: not a size: '16q'"),
    ("measure-unparseable-duration", ["measure", "{cwd}", "--duration", "5s"], 2,
     "'5s' is not a valid float"),
    ("measure-zero-duration", ["measure", "{cwd}", "--duration", "0"], 2,
     "--duration must be above 0"),
    ("measure-nan-duration", ["measure", "{cwd}", "--duration", "nan"], 2,
     "'nan' is not a finite number"),
    ("measure-zero-jobs", ["measure", "{cwd}", "--jobs", "0"], 2, "--jobs must be between"),
    ("measure-bad-jobs", ["measure", "{cwd}", "--jobs", "two"], 2,
     "--jobs: not a whole number"),
    ("measure-negative-count", ["measure", "{cwd}", "--count", "-1"], 2,
     "--count must be at least 1"),
    ("measure-unknown-op", ["measure", "{cwd}", "--ops", "flush"], 2, "unknown op 'flush'"),
    ("measure-bad-save-name", ["measure", "{cwd}", "--save", "My Disk"], 2,
     "bad profile name 'My Disk'"),
    # ---- profiles ----
    ("profiles-show-missing-arg", ["profiles", "show"], 2, "missing argument 'NAME|FILE'"),
    ("profiles-show-unknown", ["profiles", "show", "nonexistent"], 2,
     "unknown profile 'nonexistent'"),
    ("profiles-import-zero-ns", ["profiles", "import", "{inputs}/zero.json"], 2,
     ".sync.p50_ns is 0 ns; it must be > 0 and <= 6e+10 ns (60 s)"),
    ("profiles-import-1e300-ns", ["profiles", "import", "{inputs}/huge.json"], 2,
     ".sync.p50_ns is 1e+300 ns"),
    ("profiles-import-nan", ["profiles", "import", "{inputs}/nan.json"], 2,
     "p50_ns must be a finite number"),
    ("profiles-import-missing-key", ["profiles", "import", "{inputs}/no-mean.json"], 2,
     "missing mean_ns"),
    ("profiles-import-not-json", ["profiles", "import", "{inputs}/not-json.json"], 2,
     "not-json.json"),
    ("profiles-import-nonexistent", ["profiles", "import", "{cwd}/none.json"], 2,
     "no such file"),
    ("profiles-import-bad-name", ["profiles", "import", "{inputs}/good.json", "--name", "A B"],
     2, "'A B'"),
    ("profiles-compare-unknown", ["profiles", "compare", "samsung-990-pro", "nope"], 2,
     "unknown profile 'nope'"),
    ("profiles-export-unknown", ["profiles", "export", "nope"], 2, "unknown profile 'nope'"),
    ("profiles-export-no-dir", ["profiles", "export", "samsung-990-pro", "-o",
                                "{cwd}/no/dir/x.json"], 2, "no such directory"),
    # ---- simulate ----
    ("simulate-missing-profile", ["simulate"], 2, "missing option '--profile'"),
    ("simulate-bad-flavor", ["simulate", *SP, "--flavor", "mysql-6"], 2,
     "'mysql-6' is not one of"),
    ("simulate-zero-connections", ["simulate", *SP, "--connections", "0"], 2,
     "--connections 0: each must be between 1 and 4096"),
    ("simulate-negative-connections", ["simulate", *SP, "--connections", "-4"], 2,
     "--connections -4"),
    ("simulate-huge-connections", ["simulate", *SP, "--connections", "100000"], 2,
     "--connections 100000"),
    ("simulate-zero-duration", ["simulate", *SP, "--duration", "0"], 2, "--duration must be"),
    ("simulate-nan-duration", ["simulate", *SP, "--duration", "nan"], 2,
     "'nan' is not a finite number"),
    ("simulate-1e300-cpu", ["simulate", *SP, "--cpu-us", "1e300"], 2,
     "--cpu-us 1e+300 is out of range"),
    ("simulate-negative-cpu", ["simulate", *SP, "--cpu-us", "-5"], 2, "must be >= 0"),
    ("simulate-trx-commit-5", ["simulate", *SP, "--trx-commit", "5"], 2,
     "innodb_flush_log_at_trx_commit must be 0, 1 or 2"),
    ("simulate-unknown-flush-method", ["simulate", *SP, "--flush-method", "O_SOMETIMES"], 2,
     "no innodb_flush_method 'O_SOMETIMES'"),
    ("simulate-non-numeric", ["simulate", *SP, "--io-capacity", "lots"], 2,
     "'lots' is not a valid integer"),
    ("simulate-unparseable-size", ["simulate", *SP, "--buffer-pool", "1x"], 2,
     "not a size: '1x'"),
    ("simulate-share-above-1", ["simulate", *SP, "--hot-page-share", "2"], 2,
     "hot_page_share must be in [0, 1]"),
    ("simulate-workload-nonexistent", ["simulate", *SP, "--workload", "nonexistent"], 2,
     "unknown workload 'nonexistent'"),
    ("simulate-profile-nan", ["simulate", "--profile", "{inputs}/nan.json"], 2,
     "must be a finite number"),
    ("simulate-json-and-csv", ["simulate", *SP, "--json", "--csv"], 2,
     "choose one of --json and --csv"),
    # ---- tps ----
    ("tps-zero-target", ["tps", *SP, "--target-tps", "0"], 2, "--target-tps must be positive"),
    ("tps-inf-target", ["tps", *SP, "--target-tps", "inf"], 2, "'inf' is not a finite number"),
    ("tps-non-numeric", ["tps", *SP, "--cpu-us", "fast"], 2, "'fast' is not a valid float"),
    ("tps-negative-cores", ["tps", *SP, "--cpu-cores", "-1"], 2, "--cpu-cores must be >= 1"),
    ("tps-profile-1e300", ["tps", "--profile", "{inputs}/huge.json"], 2, "1e+300 ns"),
    ("tps-profile-not-json", ["tps", "--profile", "{inputs}/not-json.json"], 2,
     "not-json.json"),
    # ---- advise (a port nothing listens on: nothing is ever reached) ----
    ("advise-refused-port", ["advise", "--port", "{port}", "-H", "127.0.0.1"], 2,
     "connection refused"),
    ("advise-prom-missing-dir", ["advise", "--port", "{port}", "--prom", "{cwd}/nope/a.prom"],
     2, "no such directory"),
    ("advise-port-out-of-range", ["advise", "--port", "99999"], 2, "port 99999"),
    ("advise-zero-interval", ["advise", "--port", "{port}", "--interval", "0"], 2,
     "--interval must be at least 1 second"),
    ("advise-zero-samples", ["advise", "--port", "{port}", "--samples", "0"], 2,
     "--samples must be at least 1"),
    ("advise-unknown-rule", ["advise", "--port", "{port}", "--ignore-rule", "no-such-rule"],
     2, "--ignore-rule 'no-such-rule': no such rule"),
    ("advise-workload-nonexistent", ["advise", "--port", "{port}", "--workload", "nope"], 2,
     "unknown workload 'nope'"),
    ("advise-bad-durability", ["advise", "--durability", "loose"], 2,
     "'loose' is not one of 'strict', 'relaxed'"),
    ("advise-missing-defaults-file", ["advise", "--defaults-file", "{cwd}/none.cnf"], 2,
     "no such option file"),
    ("advise-zero-connect-timeout", ["advise", "--port", "{port}", "--connect-timeout", "0"],
     2, "connect-timeout"),
    ("advise-inventory-missing", ["advise", "--inventory", "{cwd}/none.yml"], 2,
     "no such inventory file"),
    ("advise-inventory-empty", ["advise", "--inventory", "{inputs}/empty-inventory.ini"], 2,
     "the inventory has no hosts"),
    ("advise-inventory-zero-concurrency",
     ["advise", "--inventory", "{inputs}/one-host.txt", "--concurrency", "0"], 2,
     "--concurrency must be at least 1"),
    ("advise-concurrency-without-inventory", ["advise", "--concurrency", "4"], 2,
     "--concurrency needs --inventory"),
    ("advise-inventory-and-host", ["advise", "--inventory", "{inputs}/one-host.txt", "-h",
                                   "db1"], 2, "-h/--host cannot be used with --inventory"),
    # ---- lab ----
    ("lab-run-bad-backend", ["lab", "run", "--backend", "podman"], 2,
     "'podman' is not one of 'local', 'docker'"),
    ("lab-run-basedir-is-a-file", ["lab", "run", "--basedir", "{inputs}/good.json"], 2,
     "is a file (see 'innoflush lab run --help')"),
    ("lab-validate-markdown-no-dir", ["lab", "validate", "--markdown", "{cwd}/no/dir/r.md"],
     2, "--markdown"),
    ("lab-run-zero-connections", ["lab", "run", *SP, "--connections", "0"], 2,
     "--connections 0"),
    ("lab-run-nan-duration", ["lab", "run", *SP, "--duration", "nan"], 2,
     "'nan' is not a finite number"),
    ("lab-run-unknown-flush-method", ["lab", "run", *SP, "--flush-method", "bogus"], 2,
     "--flush-method 'bogus'"),
    ("lab-run-datadir-on-proc", ["lab", "run", *SP, "--datadir-on", "/proc"], 2,
     "/proc is on proc, a pseudo-filesystem of the kernel, not storage"),
    ("lab-run-datadir-on-nonexistent", ["lab", "run", *SP, "--datadir-on", "{cwd}/nope"], 2,
     "no such directory"),
    ("lab-run-datadir-on-read-only", ["lab", "run", *SP, "--datadir-on", "{ro}"], 2,
     "Read-only file system"),
    ("lab-run-profile-zero-ns", ["lab", "run", "--profile", "{inputs}/zero.json"], 2, "0 ns"),
    ("lab-run-emulate-unknown", ["lab", "run", *SP, "--emulate", "nope"], 2,
     "unknown profile 'nope'"),
    ("lab-run-channels-out-of-range", ["lab", "run", *SP, "--emulate-channels", "5"], 2,
     "5 is not in the range 0<=x<=1"),
    ("lab-calibrate-bad-connections", ["lab", "calibrate", "--connections", "x"], 2,
     "not a whole number"),
    ("lab-calibrate-negative-duration", ["lab", "calibrate", "--duration", "-1"], 2,
     "--duration must be between 1 and 3600"),
    ("lab-validate-replicates-out-of-range", ["lab", "validate", "--replicates", "9"], 2,
     "9 is not in the range 1<=x<=5"),
    ("lab-validate-unknown-device", ["lab", "validate", "--devices", "local,nope"], 2,
     "unknown profile 'nope'"),
    # ---- bounded input files (issue 44) ----
    # device profiles: profiles import/show/compare, --profile, --emulate
    ("profiles-import-char-device", ["profiles", "import", "{zero}"], 2,
     "zero: is a character device, not a regular file"),
    ("profiles-import-fifo", ["profiles", "import", "{fifo}"], 2,
     "fifo: is a FIFO, not a regular file"),
    ("profiles-import-directory", ["profiles", "import", "{inputs}"], 2,
     "inputs: is a directory, not a regular file"),
    ("profiles-import-over-cap", ["profiles", "import", "{big}"], 2,
     "big.json: larger than 8 MiB, the cap on input files"),
    ("profiles-import-deep-json", ["profiles", "import", "{inputs}/deep.json"], 2,
     "deep.json: JSON nested more than 64 levels deep"),
    ("profiles-import-not-utf8", ["profiles", "import", "{latin1}"], 2,
     "latin1.json: cannot read it as text: byte 0xe9 at offset 24 is not UTF-8"),
    ("profiles-import-long-number", ["profiles", "import", "{inputs}/long-number.json"], 2,
     "long-number.json: not valid JSON (a number too long to read)"),
    ("profiles-show-fifo", ["profiles", "show", "{fifo}"], 2, "is a FIFO"),
    ("profiles-show-deep-json", ["profiles", "show", "{inputs}/deep.json"], 2,
     "nested more than 64 levels deep"),
    ("profiles-compare-char-device", ["profiles", "compare", "samsung-990-pro", "{zero}"], 2,
     "is a character device"),
    ("simulate-profile-char-device", ["simulate", "--profile", "{zero}"], 2,
     "is a character device"),
    ("simulate-profile-fifo", ["simulate", "--profile", "{fifo}"], 2, "is a FIFO"),
    ("simulate-profile-deep-json", ["simulate", "--profile", "{inputs}/deep.json"], 2,
     "nested more than 64 levels deep"),
    ("tps-profile-over-cap", ["tps", "--profile", "{big}"], 2, "larger than 8 MiB"),
    ("lab-run-profile-fifo", ["lab", "run", "--profile", "{fifo}"], 2, "is a FIFO"),
    ("lab-calibrate-emulate-char-device", ["lab", "calibrate", "--emulate", "{zero}"], 2,
     "is a character device"),
    ("advise-profile-fifo", ["advise", "--port", "{port}", "-H", "127.0.0.1", "--profile",
                             "{fifo}"], 2, "is a FIFO"),
    # workload profiles: --workload FILE
    ("simulate-workload-fifo", ["simulate", *SP, "--workload", "{fifo}"], 2, "is a FIFO"),
    ("simulate-workload-deep-json", ["simulate", *SP, "--workload", "{inputs}/deep.json"], 2,
     "nested more than 64 levels deep"),
    ("tps-workload-char-device", ["tps", *SP, "--workload", "{zero}"], 2,
     "is a character device"),
    ("tps-workload-not-utf8", ["tps", *SP, "--workload", "{latin1}"], 2, "is not UTF-8"),
    ("lab-run-workload-deep-json", ["lab", "run", *SP, "--workload", "{inputs}/deep.json"], 2,
     "nested more than 64 levels deep"),
    ("lab-validate-workload-fifo", ["lab", "validate", "--workload", "{fifo}"], 2, "is a FIFO"),
    ("advise-workload-over-cap", ["advise", "--port", "{port}", "-H", "127.0.0.1",
                                  "--workload", "{big}"], 2, "larger than 8 MiB"),
    # inventories: advise --inventory
    ("advise-inventory-char-device", ["advise", "--inventory", "{zero}"], 2,
     "is a character device"),
    ("advise-inventory-fifo", ["advise", "--inventory", "{fifo}"], 2, "is a FIFO"),
    ("advise-inventory-directory", ["advise", "--inventory", "{inputs}"], 2,
     "is a directory, not a regular file"),
    ("advise-inventory-over-cap", ["advise", "--inventory", "{big}"], 2, "larger than 8 MiB"),
    ("advise-inventory-deep-yaml", ["advise", "--inventory", "{inputs}/deep-inventory.yml"],
     2, "deep-inventory.yml: nested too deeply to be an inventory"),
    ("advise-inventory-not-utf8", ["advise", "--inventory", "{latin1}"], 2, "is not UTF-8"),
    # option files: --defaults-file
    ("advise-defaults-file-char-device", ["advise", "--port", "{port}", "--defaults-file",
                                          "{zero}"], 2, "is a character device"),
    ("advise-defaults-file-fifo", ["advise", "--port", "{port}", "--defaults-file", "{fifo}"],
     2, "is a FIFO"),
    ("advise-defaults-file-over-cap", ["advise", "--port", "{port}", "--defaults-file",
                                       "{big}"], 2, "larger than 8 MiB"),
    ("advise-defaults-file-not-utf8", ["advise", "--port", "{port}", "--defaults-file",
                                       "{latin1}"], 2, "is not UTF-8"),
    # captures: advise --from
    ("advise-from-char-device", ["advise", "--from", "{zero}"], 2, "is a character device"),
    ("advise-from-fifo", ["advise", "--from", "{fifo}"], 2, "is a FIFO"),
    ("advise-from-over-cap", ["advise", "--from", "{bigcapture}"], 2,
     "status.txt: larger than 64 MiB, the cap on capture files"),
    # ---- output targets (issue 44): refused before any work, the node left as it was ----
    ("advise-prom-char-device", ["advise", "--port", "{port}", "-H", "127.0.0.1", "--prom",
                                 "{out_full}"], 2,
     "full: is a character device, not a regular file (innoflush writes regular files only; "
     "give a file path)"),
    ("advise-prom-dev-null", ["advise", "--port", "{port}", "-H", "127.0.0.1", "--prom",
                              "{out_null}"], 2, "null: is a character device"),
    ("advise-prom-fifo", ["advise", "--port", "{port}", "-H", "127.0.0.1", "--prom",
                          "{out_fifo}"], 2, "fifo: is a FIFO, not a regular file"),
    ("advise-prom-symlink-to-device", ["advise", "--port", "{port}", "-H", "127.0.0.1",
                                       "--prom", "{out_devlink}"], 2,
     "devlink: links to "),
    ("advise-prom-directory", ["advise", "--port", "{port}", "-H", "127.0.0.1", "--prom",
                               "{out_dir}"], 2, "dir: is a directory"),
    ("advise-html-fifo", ["advise", "--port", "{port}", "-H", "127.0.0.1", "--html",
                          "{out_fifo}"], 2, "--html "),
    ("advise-png-char-device", ["advise", "--port", "{port}", "-H", "127.0.0.1", "--png",
                                "{out_null}"], 2,
     "exists and is a character device, not a directory"),
    ("measure-prom-char-device", ["measure", "{cwd}", "--prom", "{out_full}"], 2,
     "--prom "),
    ("measure-prom-symlink-to-device", ["measure", "{cwd}", "--prom", "{out_devlink}"], 2,
     "linked-null, which is a character device, not a regular file"),
    ("measure-prom-dangling-symlink", ["measure", "{cwd}", "--prom", "{out_dangling}"], 2,
     "dangling: no such directory"),
    ("measure-html-fifo", ["measure", "{cwd}", "--html", "{out_fifo}"], 2, "is a FIFO"),
    ("measure-html-dev-null", ["measure", "{cwd}", "--html", "{out_null}"], 2,
     "is a character device"),
    ("measure-png-fifo", ["measure", "{cwd}", "--png", "{out_fifo}"], 2,
     "exists and is a FIFO, not a directory"),
    ("simulate-html-char-device", ["simulate", *SP, "--html", "{out_full}"], 2,
     "is a character device"),
    ("simulate-html-symlink-to-device", ["simulate", *SP, "--html", "{out_devlink}"], 2,
     "links to "),
    ("simulate-html-dangling-symlink", ["simulate", *SP, "--html", "{out_dangling}"], 2,
     "no such directory"),
    ("tps-html-fifo", ["tps", *SP, "--html", "{out_fifo}"], 2, "is a FIFO"),
    ("tps-html-dev-null", ["tps", *SP, "--html", "{out_null}"], 2, "is a character device"),
    ("profiles-compare-html-fifo", ["profiles", "compare", "samsung-990-pro", "--html",
                                    "{out_fifo}"], 2, "is a FIFO"),
    ("profiles-export-char-device", ["profiles", "export", "samsung-990-pro", "-o",
                                     "{out_null}"], 2, "-o "),
    ("profiles-export-force-char-device", ["profiles", "export", "samsung-990-pro", "-o",
                                           "{out_full}", "--force"], 2,
     "is a character device"),
    ("profiles-export-force-fifo", ["profiles", "export", "samsung-990-pro", "-o",
                                    "{out_fifo}", "--force"], 2, "is a FIFO"),
    ("profiles-export-symlink-to-device", ["profiles", "export", "samsung-990-pro", "-o",
                                           "{out_devlink}", "--force"], 2, "links to "),
    ("profiles-export-dangling-symlink", ["profiles", "export", "samsung-990-pro", "-o",
                                          "{out_dangling}"], 2, "no such directory"),
    ("lab-validate-markdown-fifo", ["lab", "validate", "--markdown", "{out_fifo}"], 2,
     "--markdown "),
    ("lab-validate-markdown-char-device", ["lab", "validate", "--markdown", "{out_full}"], 2,
     "is a character device"),
    ("lab-validate-markdown-symlink-to-device", ["lab", "validate", "--markdown",
                                                 "{out_devlink}"], 2, "links to "),
    ("lab-validate-html-directory", ["lab", "validate", "--html", "{out_dir}"], 2,
     "is a directory"),
    ("lab-run-html-char-device", ["lab", "run", *SP, "--html", "{out_null}"], 2,
     "is a character device"),
    ("lab-run-html-fifo", ["lab", "run", *SP, "--html", "{out_fifo}"], 2, "is a FIFO"),
    ("lab-run-png-symlink-to-device", ["lab", "run", *SP, "--png", "{out_devlink}"], 2,
     "exists and is a character device, not a directory"),
    ("lab-run-html-dangling-symlink", ["lab", "run", *SP, "--html", "{out_dangling}"], 2,
     "no such directory"),
    # ---- values at the edge (issue 44): seeds, bounds, server options, inventories ----
    ("simulate-seed-negative", ["simulate", *SP, "--seed", "-1"], 2,
     "'--seed': -1 is not in the range 0<=x<=4294967295 (see 'innoflush simulate --help')"),
    ("simulate-seed-2-to-the-32", ["simulate", *SP, "--seed", "4294967296"], 2,
     "4294967296 is not in the range 0<=x<=4294967295"),
    ("advise-seed-negative", ["advise", "--port", "{port}", "--seed", "-1"], 2,
     "-1 is not in the range 0<=x<=4294967295 (see 'innoflush advise --help')"),
    ("lab-run-seed-negative", ["lab", "run", *SP, "--seed", "-1"], 2,
     "-1 is not in the range 0<=x<=4294967295 (see 'innoflush lab run --help')"),
    ("lab-calibrate-seed-negative", ["lab", "calibrate", "--seed", "-1"], 2,
     "(see 'innoflush lab calibrate --help')"),
    ("lab-validate-seed-negative", ["lab", "validate", "--seed", "-1"], 2,
     "(see 'innoflush lab validate --help')"),
    ("advise-interval-over-an-hour", ["advise", "--port", "{port}", "--interval", "3601"], 2,
     "--interval must be at least 1 second and at most 3600 s (got 3601) "
     "(see 'innoflush advise --help')"),
    ("advise-samples-over-1000", ["advise", "--port", "{port}", "--samples", "1001"], 2,
     "--samples must be at least 1 and at most 1000 (got 1001)"),
    ("advise-from-interval-over-an-hour",
     ["advise", "--from", "{cwd}/none", "--interval", "1e9"], 2, "--interval must be"),
    ("advise-connections-over-4096", ["advise", "--port", "{port}", "--connections", "5000"],
     2, "--connections must be at least 1 and at most 4096"),
    ("advise-connect-timeout-over-a-year",
     ["advise", "--port", "{port}", "--connect-timeout", "1e300"], 2,
     "--connect-timeout must be more than 0 seconds and at most 31536000"),
    ("advise-host-leading-dot", ["advise", "-h", ".db1", "--port", "{port}"], 2,
     "cannot connect to .db1:"),
    ("advise-host-empty-label", ["advise", "-h", "db..example.com", "--port", "{port}"], 2,
     "invalid host name"),
    ("lab-run-server-option-bare-name", ["lab", "run", *SP, "--server-option", "garbage"], 2,
     "--server-option 'garbage': give NAME=VALUE (a switch: NAME=ON or NAME=OFF) "
     "(see 'innoflush lab run --help')"),
    ("lab-run-server-option-no-name", ["lab", "run", *SP, "--server-option", "=x"], 2,
     "--server-option '=x': give NAME=VALUE"),
    ("lab-run-server-option-control-char",
     ["lab", "run", *SP, "--server-option", "innodb_log_file_size=8M\nbind-address=*"], 2,
     "control character"),
    ("lab-run-server-option-bind-address",
     ["lab", "run", *SP, "--server-option", "bind-address=0.0.0.0"], 2,
     "bind-address is set by the lab; 127.0.0.1"),
    ("lab-run-server-option-loose-bind-address",
     ["lab", "run", *SP, "--server-option", "loose_bind_address=0.0.0.0"], 2,
     "bind-address is set by the lab"),
    ("lab-run-server-option-bind-prefix", ["lab", "run", *SP, "--server-option", "bind=::"],
     2, "mysqld reads 'bind' as bind-address (a prefix of its name), which is set by the lab"),
    ("lab-run-server-option-datadir",
     ["lab", "run", *SP, "--server-option", "DATADIR={cwd}/data"], 2,
     "datadir is set by the lab"),
    ("lab-run-server-option-innodb-home",
     ["lab", "run", *SP, "--server-option", "innodb_data_home_dir={cwd}"], 2,
     "innodb-data-home-dir is set by the lab"),
    ("lab-run-server-option-port", ["lab", "run", *SP, "--server-option", "--port=3306"], 2,
     "port is set by the lab; give --port"),
    ("lab-run-server-option-socket",
     ["lab", "run", *SP, "--server-option", "socket={cwd}/s.sock"], 2,
     "socket is set by the lab"),
    ("lab-run-server-option-skip-networking",
     ["lab", "run", *SP, "--server-option", "enable-skip-networking=1"], 2,
     "skip-networking is set by the lab"),
    ("lab-run-server-option-mysqlx", ["lab", "run", *SP, "--server-option", "mysqlx=ON"], 2,
     "mysqlx is set by the lab"),
    ("lab-calibrate-server-option-datadir",
     ["lab", "calibrate", "--server-option", "datadir={cwd}/data"], 2,
     "datadir is set by the lab"),
    ("lab-validate-server-option-bind-address",
     ["lab", "validate", "--server-option", "bind_address=0.0.0.0"], 2,
     "bind-address is set by the lab"),
    ("lab-run-basedir-without-server", ["lab", "run", *SP, "--basedir", "{inputs}"], 2,
     "no mariadbd or mysqld in it, nor in its bin/, sbin/ or libexec/ "
     "(see 'innoflush lab run --help')"),
    ("lab-calibrate-basedir-without-server", ["lab", "calibrate", "--basedir", "{inputs}"],
     2, "no mariadbd or mysqld in it"),
    ("lab-validate-basedir-without-server",
     ["lab", "validate", *SP, "--basedir", "{inputs}"], 2, "no mariadbd or mysqld in it"),
    ("advise-inventory-port-not-a-number",
     ["advise", "--inventory", "{inputs}/port-not-number.ini"], 2,
     "port-not-number.ini:2: 'db1:x': the port 'x' is not a number"),
    ("advise-inventory-three-colons", ["advise", "--inventory", "{inputs}/three-colons.ini"],
     2, "three-colons.ini:2: not a host, host:port or [ipv6]:port: 'a:b:c'"),
    ("advise-inventory-port-out-of-range",
     ["advise", "--inventory", "{inputs}/port-out-of-range.ini"], 2,
     "port-out-of-range.ini:2: host 127.0.0.1:70000: mysql_port=70000 is out of range"),
    ("advise-inventory-range-of-a-million",
     ["advise", "--inventory", "{inputs}/big-range.ini"], 2,
     "big-range.ini:2: 'h[0:999999]' makes 1,000,000 hosts; an inventory holds at most 4096"),
    ("advise-inventory-yaml-range", ["advise", "--inventory", "{inputs}/big-range.yml"], 2,
     "makes 100,000 hosts"),
    ("advise-inventory-two-ranges", ["advise", "--inventory", "{inputs}/two-ranges.ini"], 2,
     "'h[0:99][0:99]' makes 10,000 hosts"),
    ("advise-inventory-4097-hosts", ["advise", "--inventory", "{inputs}/4097-hosts.ini"], 2,
     "4097-hosts.ini:3: more than 4096 hosts"),
    ("lab-run-buffer-pool-below-8m", ["lab", "run", *SP, "--buffer-pool", "1k"], 2,
     "--buffer-pool 1k: at least 8M (InnoDB does not start below 6M)"),
    ("lab-run-rows-per-trx-zero", ["lab", "run", *SP, "--rows-per-trx", "0-5"], 2,
     "rows per transaction must be 1 <= min <= max <= 10000 (got 0..5) "
     "(see 'innoflush lab run --help')"),
    # the "(see ... --help)" of a bad option value, in every command
    ("measure-unknown-op-names-help", ["measure", "{cwd}", "--ops", "flush"], 2,
     "unknown op 'flush': use none, fsync, fdatasync, dsync (see 'innoflush measure --help')"),
    ("simulate-trx-commit-names-help", ["simulate", *SP, "--trx-commit", "5"], 2,
     "must be 0, 1 or 2 (see 'innoflush simulate --help')"),
    ("simulate-use-fdatasync-names-help", ["simulate", *SP, "--use-fdatasync", "maybe"], 2,
     "--use-fdatasync 'maybe': not ON or OFF (see 'innoflush simulate --help')"),
    ("tps-cpu-cores-names-help", ["tps", *SP, "--cpu-cores", "0"], 2,
     "--cpu-cores must be >= 1 (see 'innoflush tps --help')"),
    ("profiles-import-name-names-help",
     ["profiles", "import", "{inputs}/good.json", "--name", "A B"], 2,
     "(see 'innoflush profiles import --help')"),
    ("advise-from-with-host-names-help", ["advise", "--from", "{cwd}/none", "-h", "db1"], 2,
     "--from reads a capture, not a server: drop --host (see 'innoflush advise --help')"),
    ("lab-validate-changes-names-help", ["lab", "validate", "--changes", "x"], 2,
     "--changes is for --workload-cmd (see 'innoflush lab validate --help')"),
]


def _ids(row) -> str:
    return row.values[0] if hasattr(row, "values") else row[0]


def _free_port() -> int:
    """A port nothing listens on: bound to learn it, then closed."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _tmpfs(path: Path, options: str):
    """A tmpfs of our own at path; pytest.skip, loudly, when this host cannot mount one."""
    path.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip(f"SKIPPED, NOT PASSED: mounting a tmpfs ({options}) needs root; this "
                    "row needs a read-only or a memory filesystem of its own (chmod 0555 "
                    "does not stop root)")
    got = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "innoflush-bad-input",
                          str(path)], capture_output=True, text=True, check=False)
    if got.returncode != 0:
        pytest.skip(f"SKIPPED, NOT PASSED: cannot mount a tmpfs here: {got.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=False)


# ---- bounded input files (issue 44): made in the row's own directory, on demand ----
SPECIAL_INPUTS = {"zero": "zero", "fifo": "fifo", "big": "big.json",
                  "bigcapture": "status.txt", "latin1": "latin1.json"}


def _special_input(key: str, box: dict) -> str:
    """{zero} a character device as /dev/zero is (never the system's own), {fifo} a FIFO
    nothing writes to, {big} and {bigcapture} sparse files one byte over the input and
    capture caps, {latin1} text that is not UTF-8."""
    d = box["root"] / "special"
    d.mkdir(exist_ok=True)
    p = d / SPECIAL_INPUTS[key]
    if key == "zero":
        if os.geteuid() != 0:
            pytest.skip("SKIPPED, NOT PASSED: making a character device node needs root")
        os.mknod(p, 0o600 | stat.S_IFCHR, os.makedev(1, 5))
    elif key == "fifo":
        os.mkfifo(p)
    elif key in ("big", "bigcapture"):
        p.touch()
        os.truncate(p, (8 if key == "big" else 64) * 1024 * 1024 + 1)
    else:
        p.write_bytes('{"name": "disque-rapide-\u00e9t\u00e9"}'.encode("latin-1"))
    return str(p)


# ---- output targets (issue 44): what an output option must refuse, made on demand ----
OUTPUT_NODES = ("out_null", "out_full", "out_fifo", "out_dir", "out_devlink", "out_dangling")


def _output_node(key: str, box: dict) -> str:
    """{out_null} and {out_full} character devices as /dev/null and /dev/full are (our own
    nodes, never the system's), {out_fifo} a FIFO nothing reads, {out_dir} a directory,
    {out_devlink} a symlink to a character device, {out_dangling} a symlink into a
    directory that does not exist. _listing records each node's type, device numbers and
    link target: a row that replaced one fails."""
    d = box["root"] / "out"
    d.mkdir(exist_ok=True)
    p = d / key.removeprefix("out_")
    if key in ("out_null", "out_full", "out_devlink") and os.geteuid() != 0:
        pytest.skip("SKIPPED, NOT PASSED: making a character device node needs root")
    if key in ("out_null", "out_full"):
        os.mknod(p, 0o600 | stat.S_IFCHR, os.makedev(1, 3 if key == "out_null" else 7))
    elif key == "out_fifo":
        os.mkfifo(p)
    elif key == "out_dir":
        p.mkdir()
    elif key == "out_devlink":
        os.mknod(d / "linked-null", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        os.symlink("linked-null", p)
    else:
        os.symlink("missing/report.out", p)
    return str(p)


def _listing(root: Path) -> list[str]:
    """Every path under root, with its size for files: what a run must leave unchanged."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            out.append(os.path.relpath(os.path.join(dirpath, name), root) + "/")
        for name in filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            if stat.S_ISREG(st.st_mode):
                out.append(f"{os.path.relpath(p, root)} {st.st_size}")
            else:   # a device, FIFO or symlink must stay what it was (issue 44)
                link = os.readlink(p) if stat.S_ISLNK(st.st_mode) else ""
                out.append(f"{os.path.relpath(p, root)} {stat.S_IFMT(st.st_mode):o} "
                           f"{st.st_rdev} {link}")
    return sorted(out)


def _make_sandbox(root: Path, stack: contextlib.ExitStack) -> dict:
    """The directories a row may name, its environment, and its mounts (made on demand)."""
    box = {"root": root, "cwd": root / "cwd", "inputs": root / "inputs",
           "home": root / "home", "tmp": root / "tmp"}
    for key in ("cwd", "inputs", "home", "tmp"):
        box[key].mkdir()
    for name, text in _bad_profiles().items():
        (box["inputs"] / name).write_text(text)
    env = {k: v for k, v in os.environ.items()
           if k not in ("INNOFLUSH_HOME", "XDG_DATA_HOME", "MYSQL_PWD", "MYSQL_HOST",
                        "MYSQL_TCP_PORT", "MYSQL_UNIX_PORT")}
    env.update(HOME=str(box["home"]), XDG_DATA_HOME=str(box["home"] / ".local" / "share"),
               TMPDIR=str(box["tmp"]), PYTHONPATH=str(ROOT), COLUMNS="100")
    box["env"] = env
    box["mount"] = lambda name, options: str(stack.enter_context(_tmpfs(root / name, options)))
    return box


@pytest.fixture
def sandbox(tmp_path):
    with contextlib.ExitStack() as stack:
        yield _make_sandbox(tmp_path, stack)


def _argv(args: list[str], box: dict) -> list[str]:
    def value(key: str) -> str:
        if key in ("cwd", "inputs"):
            return str(box[key])
        if key == "port":
            return str(_free_port())
        if key == "ro":
            return box["mount"]("ro", "ro,size=1m")
        if key == "shm":
            return box["mount"]("shm", "size=16m")
        if key in SPECIAL_INPUTS:
            return _special_input(key, box)
        if key in OUTPUT_NODES:
            return _output_node(key, box)
        raise KeyError(key)

    made: dict[str, str] = {}

    def once(m: re.Match) -> str:
        if m[1] not in made:
            made[m[1]] = value(m[1])
        return made[m[1]]

    return [re.sub(r"\{(\w+)\}", once, a) for a in args]


def _run(args: list[str], box: dict, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "innoflush", *args], cwd=box["cwd"],
                          env=box["env"], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, check=False)


@pytest.fixture(scope="module")
def table(request, tmp_path_factory):
    """Every selected row run once, several at a time (each process spends most of its
    second importing): row name -> (listing before, the finished process, listing
    after), or the reason the row cannot run here."""
    selected = {item.callspec.params["name"] for item in request.session.items
                if getattr(item, "originalname", None) == "test_bad_input"}
    rows = {(r.values if hasattr(r, "values") else r)[0]: (r.values if hasattr(r, "values")
                                                          else r)[1]
            for r in ROWS}
    out: dict = {}
    with contextlib.ExitStack() as stack:
        ready = {}
        for name in sorted(selected):
            box = _make_sandbox(tmp_path_factory.mktemp(name), stack)
            try:
                ready[name] = (box, _argv(rows[name], box))
            except pytest.skip.Exception as exc:
                out[name] = str(exc)

        def run(name: str):
            box, argv = ready[name]
            before = _listing(box["root"])
            done = _run(argv, box)
            return before, done, _listing(box["root"])

        with ThreadPoolExecutor(max_workers=max(2, 2 * (os.cpu_count() or 1))) as pool:
            out.update(zip(ready, pool.map(run, ready), strict=True))
        yield out


@pytest.mark.parametrize("name, args, code, needle", ROWS, ids=[_ids(r) for r in ROWS])
def test_bad_input(table, name, args, code, needle):
    got = table[name]
    if isinstance(got, str):
        pytest.skip(got)
    before, r, after = got
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].strip(), r.stderr
    assert lines[0].startswith("innoflush: error: "), lines[0]
    assert needle in lines[0], lines[0]
    assert r.returncode == code, (r.returncode, lines[0])
    assert r.stdout == ""
    assert after == before, "files left behind or changed"


def test_help_and_version_still_exit_0(sandbox):
    """The one-line errors do not touch click's own exits: --help and --version."""
    for args in (["--help"], ["--version"], ["lab", "run", "--help"],
                 ["profiles", "show", "-h"]):
        r = _run(args, sandbox)
        assert r.returncode == 0 and r.stderr == "", (args, r.stderr)
        assert r.stdout.startswith("Usage: innoflush" if "--version" not in args
                                   else "innoflush, version"), (args, r.stdout[:80])


def test_end_of_input_at_a_prompt_is_an_interruption(sandbox):
    """click's Abort (Ctrl-C or end of input at a prompt) ends as Ctrl-C does: one line,
    exit 130."""
    r = _run(["advise", "--ask-password", "--port", str(_free_port())], sandbox)
    assert r.returncode == 130, r.stderr
    assert r.stderr.splitlines()[-1] == "innoflush: interrupted"
    assert "Traceback" not in r.stderr and r.stdout == ""


@pytest.mark.server
def test_server_that_does_not_start(sandbox, server_binaries):
    """The documented exception: the error line, the log's [ERROR] lines (at most 5,
    indented), where the whole log was kept — in the temporary directory, the one file
    left, on purpose; the working directory holds nothing."""
    r = _run(["lab", "run", *SP, "--server-option", "garbage=1", "--duration", "1",
              "--no-advise"], sandbox, timeout=300)
    assert r.returncode == 1 and r.stdout == "" and "Traceback" not in r.stderr, r.stderr
    first, *quoted, where = r.stderr.splitlines()
    assert first.startswith("innoflush: error: run 1/1 (O_DIRECT, trx_commit=1, 1 conn): "
                            "the server exited with code "), first
    assert first.endswith("; its error log says:")
    assert 1 <= len(quoted) <= 5 and all(q.startswith("    [ERROR]") for q in quoted)
    # a well-formed NAME=VALUE the server does not know (a bare `garbage` is refused
    # before anything runs, exit 2)
    assert "unknown variable 'garbage=1'" in quoted[0] or "garbage" in quoted[0], quoted
    assert where.startswith("  full log: ")
    kept = Path(where.removeprefix("  full log: "))
    assert kept.parent == sandbox["tmp"] and "[ERROR]" in kept.read_text()
    assert os.listdir(sandbox["tmp"]) == [kept.name]
    assert os.listdir(sandbox["cwd"]) == []
