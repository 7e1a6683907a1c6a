"""Turn a raw capture (tests/fixtures/captures/<name>/<format>/) into the JSON fixture the
tests load with load_fixture (tests/fixtures/<name>.json): variables, the first and last
status snapshots, the gauges the live sampler polls, and the provenance.

Usage: PYTHONPATH=. python scripts/capture_to_fixture.py NAME [FORMAT]   (FORMAT: tab)
It reads the capture with the same code as `advise --from` (innoflush.live.capture).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from innoflush.live.capture import read_capture
from innoflush.live.sampling import POLLED

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"


def main(name: str, fmt: str = "tab") -> int:
    src = FIXTURES / "captures" / name
    prov = json.loads((src / "PROVENANCE.json").read_text(encoding="utf-8"))
    cap = read_capture(str(src / fmt))
    first, last = cap.snapshots[0], cap.snapshots[-1]
    opts = ", ".join(f"{k}={v}" for k, v in prov["server_options"].items())
    fixture = {
        "description": f"{prov['server']}: {opts}; {prov['load']}",
        "source": (f"captured here from {prov['server']} by {prov['by']} on "
                   f"{prov['captured']}: tests/fixtures/captures/{name}/{fmt} "
                   f"(converted by scripts/capture_to_fixture.py)"),
        "variables": cap.variables,
        "replica_status": cap.replica_rows or [],
        "interval_s": round(last.t - first.t, 3),
        "status_start": first.status,
        "status_end": last.status,
        "polls": {k: [s.status[k] for s in cap.snapshots[1:] if k in s.status]
                  for k in POLLED},
    }
    out = FIXTURES / f"{name}.json"
    out.write_text(json.dumps(fixture, indent=1) + "\n", encoding="utf-8")
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
