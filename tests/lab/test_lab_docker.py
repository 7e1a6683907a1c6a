"""`innoflush lab run --backend docker` end to end on a real engine (the offline MariaDB
image by default; INNOFLUSH_TEST_DOCKER_IMAGE to choose). Skipped loudly without an engine
or the image, failing under CI=true (see conftest's docker fixtures)."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from innoflush.commands.root import main
from innoflush.lab.experiments.options import BACKENDS
from innoflush.lab.server.local import is_listening

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_docker_two_flush_methods(docker_engine, docker_image, tmp_path):
    r = CliRunner().invoke(main, [
        "lab", "run", "--backend", "docker", "--image", docker_image,
        "--profile", "samsung-pm9a3", "--datadir-on", str(tmp_path),
        "--flush-method", "O_DIRECT,O_DIRECT_NO_FSYNC", "--trx-commit", "1",
        "--connections", "2", "--duration", "3", "--buffer-pool", "64M", "--json"])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)
    assert rep["backend"] == "docker" and rep["image"] == docker_image
    for run in rep["runs"]:
        assert run["read_back"]["innodb_flush_method"] == \
            run["requested"]["innodb_flush_method"]
        assert run["settings_match"]
        m, p = run["measured"], run["predicted"]
        assert m["client"]["commits"] > 0
        assert m["status_deltas"]["Innodb_data_fsyncs"] > 0
        assert m["server_cpu_s"] > 0                       # the container's host PID
        for k in ("tps", "commit_latency_p50_ms", "data_fsyncs_per_s"):
            assert m[k] > 0 and p[k] > 0 and run["errors_pct"][k] is not None
        pid, port = run["server_process"]["pid"], run["server_process"]["port"]
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
        assert not is_listening(port)
    left = [c for c in docker_engine.containers.list(all=True, filters={"label": "innoflush"})
            if str(tmp_path) in (c.labels.get("innoflush.workdir") or "")]
    assert not left, f"containers left: {[c.name for c in left]}"
    assert not [x for x in tmp_path.iterdir() if x.name.startswith("innoflush-lab-")]


def test_docker_missing_image_one_line(docker_engine, tmp_path):
    r = CliRunner().invoke(main, [
        "lab", "run", "--backend", "docker", "--image", "innoflush/no-such-image:0",
        "--profile", "samsung-pm9a3", "--datadir-on", str(tmp_path), "--duration", "1"])
    assert r.exit_code != 0
    line = r.output.strip()
    assert "\n" not in line and "innoflush/no-such-image:0" in line
    assert "Traceback" not in r.output
    assert BACKENDS == ("local", "docker")
