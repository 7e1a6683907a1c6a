"""MySQL 9.7 LTS and MariaDB 11.8 LTS in Docker: the offline images `make docker-ready`
builds from Debian's packages (docker/build-offline-image.sh --server NAME), driven by
`innoflush lab run --backend docker` end to end — measured beside predicted, each server's
own start-up (MySQL's --initialize-insecure with the root account set through a pipe,
caching_sha2_password, mysqlx off), nothing left running."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from innoflush.commands.root import main
from innoflush.lab.server.docker_engine import DockerServerError, get_image
from innoflush.lab.server.local import is_listening

pytestmark = [pytest.mark.docker, pytest.mark.slow]

LTS_IMAGES = {"mysql-9.7": ("innoflush/mysql:9.7-offline", "mysql", (9, 7)),
              "mariadb-11.8": ("innoflush/mariadb:11.8-offline", "mariadb", (11, 8))}


@pytest.fixture(params=sorted(LTS_IMAGES))
def lts_image(request, docker_engine):
    image, product, version = LTS_IMAGES[request.param]
    try:
        get_image(docker_engine, image)
    except DockerServerError as exc:
        msg = f"NO {image} ON THE ENGINE: {exc} — `make docker-ready` builds it"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg + " (CI=true: the image is required)", pytrace=False)
        pytest.skip(msg)
    return request.param, image, product, version


def test_lab_run_on_each_lts_image(lts_image, docker_engine, tmp_path):
    flavor, image, product, version = lts_image
    r = CliRunner().invoke(main, [
        "lab", "run", "--backend", "docker", "--image", image,
        "--profile", "samsung-pm9a3", "--datadir-on", str(tmp_path),
        "--connections", "1,4", "--duration", "2", "--buffer-pool", "64M", "--json"])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)
    assert rep["backend"] == "docker" and rep["image"] == image
    assert [run["requested"]["connections"] for run in rep["runs"]] == [1, 4]
    for run in rep["runs"]:
        assert run["settings_match"]
        m, p = run["measured"], run["predicted"]
        assert m["client"]["commits"] > 0 and m["status_deltas"]["Innodb_data_fsyncs"] > 0
        assert m["tps"] > 0 and p["tps"] > 0 and m["server_cpu_s"] > 0
        pid, port = run["server_process"]["pid"], run["server_process"]["port"]
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
        assert not is_listening(port)
    assert rep["server"]["sim_flavor"] == flavor and rep["server"]["product"] == product
    assert rep["server"]["version"].startswith(".".join(map(str, version)) + ".")
    left = docker_engine.containers.list(all=True, filters={"label": "innoflush"})
    assert not [c for c in left if str(tmp_path) in (c.labels.get("innoflush.workdir") or "")]
    assert not [x for x in tmp_path.iterdir() if x.name.startswith("innoflush-lab-")]
