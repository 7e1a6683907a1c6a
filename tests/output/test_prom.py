"""`--prom FILE` on measure and advise: the files parse with prometheus_client's parser and
hold the run's JSON figures; docs/prometheus.md lists exactly the metrics written; a real
node_exporter (Debian's prometheus-node-exporter, started here on a loopback port) serves
the files through its textfile collector."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import urllib.request
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from prometheus_client.parser import text_string_to_metric_families

from innoflush.advisor.advise import advise_capture
from innoflush.advisor.check import check, load_report
from innoflush.advisor.request import AdviseRequest
from innoflush.commands.root import main
from innoflush.errors import UsageError
from innoflush.lab.server.local import free_port, is_listening
from innoflush.live.capture import read_capture
from innoflush.measure.result import unbacked_keys
from innoflush.output.check_prom import check_metrics
from innoflush.output.prom import advise_metrics, check_prom_path, measure_metrics, write_prom
from tests.helpers.promsamples import advise_dict, measure_dict

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "captures"
ODIRECT = CAPTURES / "mariadb-10.11-odirect"   # O_DIRECT, trx_commit=1, binlog off
QUANTILES = {"0": "min_ns", "0.5": "p50_ns", "0.9": "p90_ns", "0.99": "p99_ns",
             "0.999": "p99_9_ns", "1": "max_ns"}
CALLS = {"write": "write", "sync": "sync", "op": "total"}


def parse(text: str) -> dict:
    """{metric name: (type, help, [(labels dict, value)])} of an exposition text."""
    out = {}
    for fam in text_string_to_metric_families(text):
        out[fam.name] = (fam.type, fam.documentation,
                         [(dict(s.labels), s.value) for s in fam.samples])
    return out


def series(fams: dict, name: str, **match) -> list[tuple[dict, float]]:
    return [(lab, v) for lab, v in fams.get(name, (None, None, []))[2]
            if all(lab.get(k) == str(val) for k, val in match.items())]


def one(fams: dict, name: str, **match) -> float:
    found = series(fams, name, **match)
    assert len(found) == 1, (name, match, found)
    return found[0][1]


def render(registry) -> str:
    from prometheus_client import generate_latest

    return generate_latest(registry).decode()


def one_line_error(r, code: int = 2) -> str:
    assert r.exit_code == code, (r.exit_code, r.output)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("innoflush: error: "), r.stderr
    assert "Traceback" not in r.output
    return lines[0]


# ---- what the files hold, against the JSON they come from ----------------------------------

def test_a_tail_too_few_samples_back_is_not_exported():
    r = measure_dict()
    r["tests"][0]["sync"]["count"] = 500            # backs neither p99 nor p99.9
    got = series(parse(render(measure_metrics(r))), "innoflush_device_sync_latency_seconds")
    assert sorted(lab["quantile"] for lab, _ in got) == ["0", "0.5", "0.9", "1"]


def check_measure(fams: dict, r: dict) -> None:
    """Every figure of measure's JSON r is in the parsed metrics, and nothing else."""
    path = r["path"]
    info = series(fams, "innoflush_measure_info", path=path)
    assert len(info) == 1 and info[0][1] == 1
    assert info[0][0]["engine"] == r["engine"] and info[0][0]["host"] == r["host"]
    assert info[0][0]["fs_type"] == (r["facts"].get("fs_type") or "")
    start = datetime.fromisoformat(r["date"].replace("Z", "+00:00")).timestamp()
    assert one(fams, "innoflush_measure_timestamp_seconds", path=path) == pytest.approx(start)
    assert one(fams, "innoflush_measure_duration_seconds", path=path) == r["wall_s"]
    v = r["plp_verdict"]
    safe = {True: "true", False: "false", None: "unknown"}[v["o_direct_no_fsync_safe"]]
    assert one(fams, "innoflush_device_plp_verdict", path=path, verdict=v["verdict"],
               o_direct_no_fsync_safe=safe) == 1
    n_latency = 0
    for t in r["tests"]:
        key = dict(path=path, op=t["op"], size_bytes=t["write_bytes"],
                   direct=str(t["direct"]).lower(), jobs=t["jobs"])
        ran = t["unsupported"] is None
        assert one(fams, "innoflush_device_test_supported", **key) == (1 if ran else 0)
        if not ran:
            assert series(fams, "innoflush_device_ops_per_second", **key) == []
            continue
        assert one(fams, "innoflush_device_ops_per_second", **key) == t["ops_per_s"]
        assert one(fams, "innoflush_device_measured_ops", **key) == t["count"]
        for word, json_key in CALLS.items():
            s = t[json_key]
            got = series(fams, f"innoflush_device_{word}_latency_seconds", **key)
            if s is None:
                assert got == [], (word, key)
                continue
            # the tail quantiles too few samples back are not exported
            assert {lab["quantile"]: val for lab, val in got} == pytest.approx(
                {q: s[field] / 1e9 for q, field in QUANTILES.items()
                 if field not in unbacked_keys(s)}, rel=1e-9)
            assert one(fams, f"innoflush_device_{word}_latency_mean_seconds", **key) == \
                pytest.approx(s["mean_ns"] / 1e9, rel=1e-9)
            n_latency += len(got)
    # no series beyond the tests of the JSON
    ran = [t for t in r["tests"] if t["unsupported"] is None]
    expected = sum(len(set(QUANTILES.values()) - unbacked_keys(t[k]))
                   for t in ran for k in CALLS.values() if t[k] is not None)
    assert n_latency == expected
    assert len(fams["innoflush_device_test_supported"][2]) == len(r["tests"])


def check_advise(fams: dict, rep: dict, server: str) -> None:
    """The advise report rep's figures are in the parsed metrics, under server."""
    assert one(fams, "innoflush_advise_exit_code", server=server) == rep["exit_code"]
    info = series(fams, "innoflush_advise_info", server=server)
    assert len(info) == 1
    assert info[0][0]["version"] == rep["server"]["version"]
    assert info[0][0]["source"] == rep["source"]["kind"]
    assert info[0][0]["durability"] == rep["durability"]
    ts = one(fams, "innoflush_advise_timestamp_seconds", server=server)
    assert time.time() - 3600 < ts <= time.time()
    findings = rep["findings"]
    for sev in ("data-safety", "durability", "performance"):
        assert one(fams, "innoflush_advise_findings", server=server, severity=sev) == \
            sum(f["severity"] == sev for f in findings)
    got = series(fams, "innoflush_advise_finding", server=server)
    assert sorted(lab["id"] for lab, _ in got) == sorted(f["id"] for f in findings)
    for f in findings:
        lab = next(lab for lab, _ in got if lab["id"] == f["id"])
        assert (lab["severity"], lab["setting"], lab["recommended"], lab["current"]) == \
            (f["severity"], f["setting"], str(f["recommended"]), str(f["current"]))
        p = f.get("predicted")
        tps = series(fams, "innoflush_advise_predicted_tps_change_ratio", server=server,
                     id=f["id"])
        if p is None or p["change"]["tps_pct"] is None:
            assert tps == []
            continue
        assert tps[0][1] == pytest.approx(p["change"]["tps_pct"] / 100)
        rng = (p.get("range") or {}).get("tps_pct")
        low = series(fams, "innoflush_advise_predicted_tps_change_low_ratio", server=server,
                     id=f["id"])
        high = series(fams, "innoflush_advise_predicted_tps_change_high_ratio",
                      server=server, id=f["id"])
        if rng:
            assert (low[0][1], high[0][1]) == pytest.approx((rng[0] / 100, rng[1] / 100))
        else:
            assert low == [] and high == []
        likely = (p.get("interval") or {}).get("tps_pct")
        lk = [series(fams, f"innoflush_advise_predicted_tps_change_likely_{end}_ratio",
                     server=server, id=f["id"]) for end in ("low", "high")]
        if likely:
            assert (lk[0][0][1], lk[1][0][1]) == pytest.approx((likely[0] / 100,
                                                                likely[1] / 100))
        else:
            assert lk == [[], []]
    combined = rep.get("combined_prediction")
    all_tps = series(fams, "innoflush_advise_predicted_tps_change_ratio", server=server,
                     id="all")
    if combined:
        assert all_tps[0][1] == pytest.approx(combined["change"]["tps_pct"] / 100)
    else:
        assert all_tps == []
    o = rep["observed"] or {}
    for key, name in (("commits_per_s", "commits_per_second"),
                      ("data_fsyncs_per_s", "data_fsyncs_per_second"),
                      ("redo_syncs_per_s", "redo_syncs_per_second"),
                      ("pages_written_per_s", "pages_written_per_second"),
                      ("seconds", "window_seconds")):
        got = series(fams, f"innoflush_advise_observed_{name}", server=server)
        if o.get(key) is None:
            assert got == []
        else:
            assert got[0][1] == pytest.approx(o[key])
    st = rep["settings"]
    setting = {lab["setting"]: lab["value"]
               for lab, _ in series(fams, "innoflush_advise_setting_info", server=server)}
    assert setting["innodb_flush_method"] == st["innodb_flush_method"]
    assert setting["innodb_flush_log_at_trx_commit"] == \
        str(st["innodb_flush_log_at_trx_commit"])


def test_measure_metrics_hold_every_figure():
    r = measure_dict()
    fams = parse(render(measure_metrics(r)))
    check_measure(fams, r)
    # the unsupported test: only its supported=0 series
    refused = dict(path=r["path"], op="dsync", size_bytes=4096, direct="true", jobs=4)
    assert [name for name, (_, _, ss) in fams.items()
            if any(all(lab.get(k) == str(v) for k, v in refused.items()) for lab, _ in ss)] \
        == ["innoflush_device_test_supported"]
    assert series(fams, "innoflush_measure_info")[0][0]["device"] == "nvme0n1p1"


def test_advise_metrics_hold_every_figure():
    rep = advise_dict()
    fams = parse(render(advise_metrics(rep)))
    check_advise(fams, rep, "db1:3306")
    # a finding's prediction without a range has no low/high; the combined one has
    assert series(fams, "innoflush_advise_predicted_tps_change_low_ratio", id="all")
    assert one(fams, "innoflush_advise_predicted_commit_latency_p99_change_ratio",
               id="use-fdatasync.cheaper-than-fsync") == pytest.approx(-0.2)
    assert one(fams, "innoflush_advise_model_explains_workload") == 1
    assert series(fams, "innoflush_advise_device_info")[0][0]["plp"] == "no"


def test_advise_metrics_name_the_capture_and_never_the_user():
    rep = advise_dict(live=False)
    text = render(advise_metrics(rep))
    check_advise(parse(text), rep, "capture /srv/db1-capture")
    live = render(advise_metrics(advise_dict(), now=1_700_000_000))
    assert "monitor" not in live and 'server="db1:3306"' in live
    assert one(parse(live), "innoflush_advise_timestamp_seconds") == 1_700_000_000


def test_nothing_found_gives_zero_findings_and_no_predictions():
    rep = {**advise_dict(), "findings": [], "combined_prediction": None, "exit_code": 0,
           "device": None, "fit": None, "observed": None}
    fams = parse(render(advise_metrics(rep)))
    assert [v for _, v in series(fams, "innoflush_advise_findings")] == [0, 0, 0]
    assert "innoflush_advise_finding" not in fams
    assert not any(n.startswith("innoflush_advise_predicted_") for n in fams)
    assert not any(n.startswith("innoflush_advise_observed_") for n in fams)


def test_label_values_are_escaped():
    r = measure_dict()
    r["path"] = '/srv/a "quoted"\\dir\nwith newline'
    fams = parse(render(measure_metrics(r)))
    assert series(fams, "innoflush_measure_info")[0][0]["path"] == r["path"]
    check_measure(fams, r)


def test_write_is_atomic_and_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "m.prom"
    target.write_text("old\n")
    write_prom(str(target), measure_metrics(measure_dict()))
    assert os.listdir(tmp_path) == ["m.prom"]
    assert "innoflush_device_sync_latency_seconds" in parse(target.read_text())


def test_prom_path_is_checked(tmp_path):
    with pytest.raises(UsageError, match="no such directory"):
        check_prom_path(str(tmp_path / "missing" / "x.prom"))
    with pytest.raises(UsageError, match="is a directory"):
        check_prom_path(str(tmp_path))
    (tmp_path / "file").write_text("")
    with pytest.raises(UsageError, match="no such directory"):
        check_prom_path(str(tmp_path / "file" / "x.prom"))
    check_prom_path(str(tmp_path / "x.prom"))


# ---- docs/prometheus.md lists exactly what is written ---------------------------------------

def documented(section: str) -> dict[str, tuple[str, list[str], str]]:
    """{metric: (type, labels, help)} of the table after `<!-- prom-metrics section -->`."""
    text = (ROOT / "docs" / "prometheus.md").read_text()
    m = re.search(rf"<!-- prom-metrics {section} -->\n((?:\|.*\n)+)", text)
    assert m, f"no prom-metrics {section} table"
    out = {}
    for line in m.group(1).splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        name = cells[0].strip("`")
        out[name] = (cells[1], re.findall(r"`([^`]+)`", cells[2]), cells[4])
    return out


def check_dict() -> dict:
    fix = ROOT / "tests" / "fixtures" / "checks" / "mariadb-10.11-trx-commit"
    after = advise_capture(read_capture(str(fix / "applied"), 5.0),
                           AdviseRequest(predict=False))
    return check(load_report(str(fix / "report.json")), after)


@pytest.mark.parametrize("section, registry", [
    ("measure", lambda: measure_metrics(measure_dict())),
    ("advise", lambda: advise_metrics(advise_dict())),
    ("check", lambda: check_metrics(check_dict()))])
def test_docs_list_every_metric(section, registry):
    doc = documented(section)
    real = {}
    for fam in registry().collect():
        labels: list[str] = []
        for s in fam.samples:
            labels += [k for k in s.labels if k not in labels]
        real[fam.name] = (fam.type, labels, fam.documentation)
    assert sorted(real) == sorted(doc), "docs/prometheus.md and the metrics differ"
    for name, (typ, labels, help_text) in real.items():
        assert doc[name][0] == typ, name
        assert sorted(doc[name][1]) == sorted(labels), name
        assert doc[name][2] == help_text, name


# ---- the commands ---------------------------------------------------------------------------

def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_measure_writes_the_json_figures(tmp_path):
    probe = tmp_path / "probe"
    probe.mkdir()
    out = tmp_path / "out" / "measure.prom"
    out.parent.mkdir()
    r = run("measure", str(probe), "--sizes", "16k", "--ops", "none,fsync,dsync",
            "--direct", "both", "--count", "30", "--file-size", "1M", "--json",
            "--prom", str(out))
    assert r.exit_code == 0, r.output
    result = json.loads(r.stdout)
    check_measure(parse(out.read_text()), result)
    assert os.listdir(out.parent) == ["measure.prom"] and os.listdir(probe) == []


@pytest.mark.parametrize("where, text", [("missing/m.prom", "no such directory"),
                                         (".", "is a directory")])
def test_measure_refuses_a_bad_prom_path_before_the_run(tmp_path, where, text):
    start = time.monotonic()
    r = run("measure", str(tmp_path), "--sizes", "16k", "--ops", "fsync", "--direct", "on",
            "--duration", "30", "--prom", str(tmp_path / where))
    assert text in one_line_error(r)
    assert time.monotonic() - start < 10   # the 30 s test never started
    assert os.listdir(tmp_path) == []


def test_advise_from_a_capture_writes_the_report(tmp_path, profile_files):
    out = tmp_path / "advise.prom"
    r = run("advise", "--from", str(ODIRECT / "tab"), "--profile", profile_files["volatile"],
            "--json", "--prom", str(out))
    assert r.exit_code in (0, 3, 4), r.stderr
    rep = json.loads(r.stdout)
    check_advise(parse(out.read_text()), rep, f"capture {ODIRECT / 'tab'}")


def test_advise_refuses_a_bad_prom_path_before_connecting(tmp_path):
    # a port nothing listens on: the path is refused before any connection is tried
    r = run("advise", "--host", "127.0.0.1", "--port", str(free_port()), "--user", "x",
            "--prom", str(tmp_path / "missing" / "a.prom"))
    assert "no such directory" in one_line_error(r)
    r = run("advise", "--from", str(ODIRECT / "tab"), "--prom", str(tmp_path / "no" / "a.prom"))
    assert "no such directory" in one_line_error(r)


def test_a_failed_run_leaves_the_previous_file(tmp_path):
    out = tmp_path / "advise.prom"
    out.write_text("innoflush_advise_exit_code 3\n")
    r = run("advise", "--from", str(tmp_path / "no-capture"), "--prom", str(out))
    one_line_error(r)
    assert out.read_text() == "innoflush_advise_exit_code 3\n"
    assert os.listdir(tmp_path) == ["advise.prom"]


@pytest.mark.server
def test_advise_live_writes_the_report(mariadb_server, server_accounts, insert_load,
                                       profile_files, tmp_path):
    user, password = server_accounts["password"]
    out = tmp_path / "advise.prom"
    with insert_load(mariadb_server):
        r = CliRunner().invoke(main, [
            "advise", "--host", "127.0.0.1", "--port", str(mariadb_server.port), "--user",
            user, "--interval", "2", "--profile", profile_files["volatile"], "--json",
            "--prom", str(out)], env={"MYSQL_PWD": password, "HOME": "/nonexistent"})
    assert r.exit_code in (0, 3, 4), r.stderr
    rep = json.loads(r.stdout)
    text = out.read_text()
    fams = parse(text)
    check_advise(fams, rep, f"127.0.0.1:{mariadb_server.port}")
    assert rep["observed"]["commits_per_s"] > 0
    assert one(fams, "innoflush_advise_observed_commits_per_second") > 0
    assert password not in text and user not in text


@pytest.mark.server
def test_advise_live_findings_and_predictions(volatile_server, insert_load, profile_files,
                                              tmp_path):
    """A server whose syncs take the profile's time: the relaxed goal's finding comes
    with a prediction, and the file carries it."""
    out = tmp_path / "advise.prom"
    with insert_load(volatile_server, threads=3) as load:
        load.wait_started()
        r = CliRunner().invoke(main, [
            "advise", "--host", "127.0.0.1", "--port", str(volatile_server.port), "--user",
            "root", "--interval", "3", "--profile", profile_files["volatile"],
            "--durability", "relaxed", "--json", "--prom", str(out)],
            env={"MYSQL_PWD": "", "HOME": "/nonexistent"})
    # 3: findings with predictions; 4: the fit could not explain what it saw on this
    # (loaded, shared) host, so the findings come without a predicted number
    assert r.exit_code in (3, 4), r.stderr
    rep = json.loads(r.stdout)
    fams = parse(out.read_text())
    check_advise(fams, rep, f"127.0.0.1:{volatile_server.port}")
    f = {x["id"]: x for x in rep["findings"]}["trx-commit.relaxed-allows-2"]
    assert one(fams, "innoflush_advise_finding", id=f["id"], current="1",
               recommended="2") == 1
    if r.exit_code == 3:
        assert one(fams, "innoflush_advise_predicted_tps_change_ratio", id=f["id"]) == \
            pytest.approx(f["predicted"]["change"]["tps_pct"] / 100)
        assert one(fams, "innoflush_advise_model_explains_workload") == 1
    else:   # no number the model cannot back, in the file either
        assert not series(fams, "innoflush_advise_predicted_tps_change_ratio", id=f["id"])
        assert one(fams, "innoflush_advise_model_explains_workload") == 0


# ---- a real node_exporter serves the files ---------------------------------------------------

def _node_exporter_binary() -> str:
    exe = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
    if exe is None:
        msg = ("NO NODE_EXPORTER: prometheus-node-exporter is not installed "
               "(make system-deps) — the textfile collector test did not run")
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg + " (CI=true: it is required)", pytrace=False)
        pytest.skip(msg)
    return exe


@pytest.fixture
def node_exporter(tmp_path):
    """node_exporter with only its textfile collector, on a free loopback port, reading
    a directory of its own; yields (metrics URL, textfile directory). Stopped at the end,
    and checked gone."""
    exe = _node_exporter_binary()
    textdir = tmp_path / "textfile"
    textdir.mkdir()
    port = free_port()
    log = (tmp_path / "node_exporter.log").open("w")
    proc = subprocess.Popen([exe, f"--web.listen-address=127.0.0.1:{port}",
                             "--collector.disable-defaults", "--collector.textfile",
                             f"--collector.textfile.directory={textdir}"],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 15
        while not is_listening(port):
            assert proc.poll() is None, (tmp_path / "node_exporter.log").read_text()
            assert time.monotonic() < deadline, "node_exporter did not start listening"
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/metrics", textdir
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        log.close()
        with pytest.raises(ProcessLookupError):
            os.kill(proc.pid, 0)
        assert not is_listening(port), f"something still listens on port {port}"


def scrape(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as resp:
        assert resp.status == 200
        return parse(resp.read().decode())


def test_node_exporter_serves_the_files(node_exporter, tmp_path, profile_files):
    url, textdir = node_exporter
    before = scrape(url)
    assert not any(n.startswith("innoflush_") for n in before)
    probe = tmp_path / "probe"
    probe.mkdir()
    r = run("measure", str(probe), "--sizes", "16k", "--ops", "fsync,fdatasync",
            "--direct", "on", "--count", "20", "--file-size", "1M", "--json",
            "--prom", str(textdir / "innoflush-measure.prom"))
    assert r.exit_code == 0, r.output
    measured = json.loads(r.stdout)
    r = run("advise", "--from", str(ODIRECT / "tab"), "--profile", profile_files["volatile"],
            "--json", "--prom", str(textdir / "innoflush-advise.prom"))
    assert r.exit_code in (0, 3, 4), r.stderr
    advised = json.loads(r.stdout)

    served = scrape(url)
    assert one(served, "node_textfile_scrape_error") == 0
    mtimes = {lab["file"] for lab, _ in served["node_textfile_mtime_seconds"][2]}
    assert {Path(f).name for f in mtimes} == {"innoflush-measure.prom",
                                              "innoflush-advise.prom"}
    check_measure(served, measured)
    check_advise(served, advised, f"capture {ODIRECT / 'tab'}")
    # served as written: every family and sample of both files, same type and help
    for name in ("innoflush-measure.prom", "innoflush-advise.prom"):
        written = parse((textdir / name).read_text())
        for fam, (typ, help_text, samples) in written.items():
            assert served[fam][0] == typ and served[fam][1] == help_text, fam
            assert sorted(_flat(served[fam][2])) == sorted(_flat(samples)), fam


def _flat(samples) -> list[tuple]:
    return [(tuple(sorted(lab.items())), float(v)) for lab, v in samples]


def test_advise_check_writes_its_metrics(tmp_path, monkeypatch):
    """--check --prom: the check's verdict and every judged figure, from a real report
    and a capture of the same server after its change."""
    monkeypatch.setenv("INNOFLUSH_HOME", str(tmp_path / "home"))
    fix = ROOT / "tests" / "fixtures" / "checks" / "mariadb-10.11-trx-commit"
    out = tmp_path / "check.prom"
    r = run("advise", "--from", str(fix / "applied"), "--check", str(fix / "report.json"),
            "--prom", str(out))
    assert r.exit_code == 5, r.output
    samples = {(s.name, s.labels.get("figure") or s.labels.get("verdict")): s.value
               for fam in text_string_to_metric_families(out.read_text())
               for s in fam.samples}
    assert samples[("innoflush_check_verdict", "did not hold")] == 1
    assert samples[("innoflush_check_verdict", "held")] == 0
    assert samples[("innoflush_check_exit_code", None)] == 5
    assert samples[("innoflush_check_held", "tps")] == 0
    assert samples[("innoflush_check_predicted_ratio", "tps")] == pytest.approx(1.632)
    assert ("innoflush_check_held", "commit_latency_us") not in samples   # not judged
