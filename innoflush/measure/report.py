"""The human-readable report of a measurement: device facts, latency table, PLP verdict."""

from __future__ import annotations

from tabulate import tabulate

from ..units import format_size, format_us_cell
from .result import MeasureResult, TestResult

_HEADERS = ["op", "size", "mode", "jobs", "call", "count", "ops/s", "mean µs", "p50 µs",
            "p90 µs", "p99 µs", "p99.9 µs", "max µs"]
_ALIGN = ["left", "right", "left", "right", "left", "right", "right", "right", "right",
          "right", "right", "right", "right"]


def _yn(v) -> str:
    return "?" if v is None else ("yes" if v else "no")


def _rows(t: TestResult, notes: list[str]) -> list[list[str]]:
    head = [t.op, format_size(t.write_bytes), "O_DIRECT" if t.direct else "buffered",
            str(t.jobs)]
    if t.unsupported:
        if t.unsupported not in notes:
            notes.append(t.unsupported)
        mark = "*" * (notes.index(t.unsupported) + 1)
        return [head + ["n/a" + mark, "", "", "", "", "", "", "", ""]]
    rows = []
    calls = [("write+O_DSYNC" if t.op == "dsync" else "write", t.write)]
    if t.sync is not None:
        calls.append((t.op, t.sync))
    for i, (call, s) in enumerate(calls):
        first = i == 0
        rows.append((head if first else ["", "", "", ""]) + [
            call, f"{s.count:,}" if first else "",
            f"{t.ops_per_s:,.0f}" if first and t.ops_per_s is not None else "",
            *(format_us_cell(ns) for ns in (s.mean_ns, s.p50_ns, s.p90_ns, s.p99_ns,
                                            s.p99_9_ns, s.max_ns))])
    return rows


def facts_lines(facts: dict) -> list[str]:
    rows: list[tuple[str, str]] = []
    fs = facts.get("fs_type") or "?"
    rows.append(("filesystem", f"{fs} on {facts.get('mount_point') or '?'} (source "
                 f"{facts.get('mount_source') or '?'}; options "
                 f"{facts.get('mount_options') or '?'}"
                 + (f"; {facts['super_options']}" if facts.get("super_options") else "")
                 + ")"))
    if facts.get("block_device"):
        kind = facts.get("block_device_kind") or "?"
        extra = facts.get("dm_name") or facts.get("md_level") or ""
        rows.append(("block device", f"{facts['block_device']} ({kind}"
                     + (f" {extra}" if extra else "") + f", {facts.get('dev')})"))
    for d in facts.get("disks") or []:
        ident = ", ".join(f"{k} {d[k]}" for k in ("model", "vendor", "serial") if d.get(k))
        rot = _yn(d.get("rotational"))
        if d.get("virtual"):
            rot += " (virtual disk: not meaningful)"
        rows.append((f"disk {d.get('name')}",
                     (ident + "; " if ident else "")
                     + f"write cache '{d.get('write_cache') or '?'}', FUA {_yn(d.get('fua'))}, "
                     f"rotational {rot}, blocks {d.get('logical_block_size') or '?'}/"
                     f"{d.get('physical_block_size') or '?'} B"))
    if facts.get("disks_note"):
        rows.append(("disks", facts["disks_note"]))
    od = facts.get("o_direct") or {}
    if od.get("supported") is not None:
        rows.append(("O_DIRECT", "supported" if od["supported"] else
                     f"not supported: {od.get('reason')}"))
    rows.append(("host", f"{facts.get('hostname') or '?'}, {facts.get('kernel') or '?'}"))
    rows.append(("cpu", f"{facts.get('cpu_model') or '?'} × {facts.get('cpu_count') or '?'}"))
    return tabulate(rows, tablefmt="plain").splitlines()


def render(result: MeasureResult) -> str:
    s = result.settings
    if s.get("count") is not None:
        per = f"{s['count']} ops per job per test"
    else:
        per = f"{s.get('duration_s')} s per test"
    warm = (f"first {s['warmup_ops']} ops of each job dropped" if s.get("warmup_ops")
            else "no warm-up dropped")
    engine = result.engine + (f" ({result.engine_version})" if result.engine_version else "")
    out = [f"innoflush measure {result.path}: engine {engine}, {per}, {warm}, "
           f"{format_size(s['file_size_bytes'])} probe file per job", ""]
    out += facts_lines(result.facts)
    out.append("")
    notes: list[str] = []
    rows = [r for t in result.tests for r in _rows(t, notes)]
    out.append(tabulate(rows, headers=_HEADERS, colalign=_ALIGN, disable_numparse=True))
    for i, n in enumerate(notes):
        out.append(f"{'*' * (i + 1)} {n}")
    v = result.plp_verdict
    safe = {True: "yes", False: "NO", None: "cannot tell"}[v.get("o_direct_no_fsync_safe")]
    out += ["", f"PLP verdict: {v['verdict']} (O_DIRECT_NO_FSYNC safe: {safe})"]
    out += [f"  - {r}" for r in v.get("reasons", [])]
    if result.warnings:
        out += ["", "Warnings:"] + [f"  - {w}" for w in result.warnings]
    n = len(result.tests)
    out.append(f"\n{n} test{'s' if n != 1 else ''} in {result.wall_s:.1f} s")
    return "\n".join(out)
