#!/usr/bin/env python3
"""Screenshots of each command's --html page, for docs/images/screenshots/.

Runs every command that takes --html on real data — measure on a directory under this
checkout (not /tmp: it may be tmpfs), built-in profiles, a MariaDB from this host's
binaries under an insert load for advise (its syncs delayed to samsung-990-pro's, as
`make docs` does), lab run and a small lab validate on local servers — then opens each
page in Debian's headless chromium with the network off (tests/helpers/browser.py, the browser
tests' driver) and saves the top of the page as docs/images/screenshots/<command>.png.

    scripts/screenshots.py [--only measure,simulate,...] [--out DIR]

Needs chromium, chromium-driver and selenium (`make install-test`, `make system-deps`);
advise and the lab need mariadbd. Takes about 3 minutes.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "helpers"))
sys.path.insert(0, str(ROOT / "scripts"))

import browser  # noqa: E402
from docs_examples import _innoflush_cmd, insert_load  # noqa: E402

WIDTH, MAX_HEIGHT = 1100, 2200
PROFILE = "samsung-990-pro"


def commands(work: Path, port: int = 0) -> dict[str, list[str]]:
    lab = ["--datadir-on", str(work / "lab"), "--profile", PROFILE, "--buffer-pool", "64M"]
    out = {
        "measure": ["measure", str(work / "probe"), "--quick", "--duration", "0.5"],
        "profiles-compare": ["profiles", "compare", PROFILE, "crucial-m500", "samsung-pm9a3",
                             "gcp-hyperdisk-balanced-ext4"],
        "simulate": ["simulate", "--profile", PROFILE, "--flush-method",
                     "O_DIRECT,O_DIRECT_NO_FSYNC", "--trx-commit", "1,2",
                     "--connections", "1,4,16", "--duration", "3"],
        "tps": ["tps", "--profile", PROFILE, "--target-tps", "2000"],
        "lab-run": ["lab", "run", *lab, "--flush-method", "O_DIRECT,O_DIRECT_NO_FSYNC",
                    "--trx-commit", "1", "--connections", "1,4", "--duration", "3",
                    "--no-advise"],
        "lab-validate": ["lab", "validate", *lab, "--devices", f"local,{PROFILE}",
                         "--connections", "1,4", "--duration", "2", "--warmup", "0.5",
                         "--calibrate-duration", "2"],
    }
    out["advise"] = ["advise", "-H", "127.0.0.1", "-P", str(port), "-u", "root",
                     "--interval", "3", "--samples", "3", "--profile", PROFILE]
    return out


@contextlib.contextmanager
def advise_server(work: Path):
    """A MariaDB under an insert load, its syncs delayed to PROFILE's; its port."""
    from innoflush.lab import LocalServer, ServerOptions
    from innoflush.lab.emulation.emulate import build_library, preload_env
    from innoflush.profiles import load_profile

    opts = ServerOptions(innodb_flush_method="O_DIRECT_NO_FSYNC",
                         innodb_flush_log_at_trx_commit=1, log_bin=True, sync_binlog=0,
                         innodb_buffer_pool_size="128M")
    env = preload_env(load_profile(PROFILE), build_library(work / "lib"))
    srv = LocalServer(work / "server", opts, remove_on_stop=True, env=env)
    srv.start()
    try:
        with insert_load(srv):
            yield srv.port
    finally:
        srv.stop()


def shoot(drv, page: Path, png: Path) -> None:
    drv.get(page.resolve().as_uri())
    browser.full_page_png(drv, png, WIDTH, MAX_HEIGHT)
    errors = [e for e in drv.get_log("browser") if e.get("level") == "SEVERE"]
    if errors:
        raise SystemExit(f"{page.name}: console errors {errors}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default=None, help="comma-separated commands (names above)")
    ap.add_argument("--out", default=str(ROOT / "docs" / "images" / "screenshots"))
    opts = ap.parse_args(argv)
    why = browser.missing()
    if why:
        print(f"screenshots: {why}", file=sys.stderr)
        return 1
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".screenshots-", dir=ROOT))
    try:
        for d in ("probe", "lab"):
            (work / d).mkdir()
        wanted = set(opts.only.split(",")) if opts.only else None
        with contextlib.ExitStack() as stack:
            drv = browser.driver(WIDTH, 900)
            stack.callback(drv.quit)
            for name in commands(work):
                if wanted is not None and name not in wanted:
                    continue
                with contextlib.ExitStack() as server:
                    # the server and its load only while advise runs: they would take
                    # CPU from the other commands' runs
                    port = server.enter_context(advise_server(work)) \
                        if name == "advise" else 0
                    args = commands(work, port)[name]
                    page = work / f"{name}.html"
                    print(f"screenshots: innoflush {' '.join(args)}", file=sys.stderr)
                    r = subprocess.run(_innoflush_cmd() + args + ["--html", str(page)],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                       text=True, cwd=ROOT)
                if r.returncode not in (0, 3, 4):
                    print(f"screenshots: {name} exited {r.returncode}: {r.stderr[-2000:]}",
                          file=sys.stderr)
                    return 1
                shoot(drv, page, out / f"{name}.png")
                print(f"screenshots: {name}: page {page.stat().st_size} bytes -> "
                      f"{(out / f'{name}.png').relative_to(ROOT)}", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
