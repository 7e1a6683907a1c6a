"""The Docker engine the lab's server containers run on: a client of it (or one line
saying how to start it), an image on it (or how to get one), what an image says it runs,
and the lab's containers a killed process left behind (label ``innoflush=lab``).

It imports the Docker SDK at module level, as docker_backend.py does: both are imported
only when ``--backend docker`` asks for them (lab/server/for_run.py's doc)."""

from __future__ import annotations

import contextlib
import os
import re

import docker

from .backend import ServerError

OFFLINE_IMAGE = "innoflush/mariadb:10.11-offline"   # docker/build-offline-image.sh
DEFAULT_IMAGE = "mysql:8.4"
OFFICIAL_IMAGES = ("mysql:8.4", "mysql:8.0", "mariadb:11.4", "mariadb:10.11")
LABEL = "innoflush"
LABEL_VALUE = "lab"
BUILD_SCRIPT = "docker/build-offline-image.sh"
ENGINE_SCRIPT = "scripts/docker-engine.sh"
_API_TIMEOUT_S = 120          # creating a container copies the image under vfs


class DockerServerError(ServerError):
    """The server container could not be set up, started or stopped."""


class DockerEngineError(DockerServerError):
    """No Docker engine answers (not running, no permission, wrong DOCKER_HOST)."""


class ImageNotFoundError(DockerServerError):
    """The image is not on the engine (and was not pulled)."""


def engine_address() -> str:
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


def engine_reason(exc: BaseException) -> str:
    text = str(exc)
    if "PermissionError" in text or "Permission denied" in text:
        return ("permission denied: add your user to the docker group, or run as root")
    if "FileNotFoundError" in text or "No such file" in text:
        return "no socket there"
    if "Connection refused" in text or "ConnectionRefused" in text:
        return "connection refused"
    text = re.sub(r"\s+", " ", text).strip()
    return text[:200]


def docker_client(timeout: float = _API_TIMEOUT_S):
    """A client of the engine DOCKER_HOST names (or the local socket), API version
    negotiated; DockerEngineError, one line saying how to start it, when none answers."""
    try:
        client = docker.from_env(version="auto", timeout=int(timeout))
        client.ping()
    except docker.errors.DockerException as exc:
        raise DockerEngineError(
            f"cannot reach the Docker engine at {engine_address()} ({engine_reason(exc)}): "
            f"start it (sudo {ENGINE_SCRIPT} start, or systemctl start docker) or point "
            "DOCKER_HOST at a running engine") from None
    except OSError as exc:
        raise DockerEngineError(
            f"cannot reach the Docker engine at {engine_address()} ({exc}): start it "
            f"(sudo {ENGINE_SCRIPT} start, or systemctl start docker)") from None
    return client


def how_to_get(image: str) -> str:
    if image == OFFLINE_IMAGE or image.startswith("innoflush/"):
        return (f"build it with `sudo {BUILD_SCRIPT}` (no registry needed: it is made from "
                "Debian's packages; `make docker-ready` does it too)")
    return (f"get it with `docker pull {image}` where a registry is reachable, or, without "
            f"one, build the offline MariaDB image with `sudo {BUILD_SCRIPT}` and use "
            f"--image {OFFLINE_IMAGE}")


def get_image(client, image: str, pull: bool = False):
    """The image object; with pull, pulled when missing. ImageNotFoundError otherwise."""
    try:
        return client.images.get(image)
    except docker.errors.ImageNotFound:
        pass
    except docker.errors.APIError as exc:
        raise DockerServerError(f"cannot inspect the image {image}: "
                                f"{exc.explanation or exc}") from None
    if pull:
        try:
            return client.images.pull(image)
        except docker.errors.DockerException as exc:
            raise ImageNotFoundError(
                f"Docker image {image} is not on this engine and pulling it failed "
                f"({engine_reason(exc)}): {how_to_get(image)}") from None
    raise ImageNotFoundError(f"Docker image {image} is not on this engine: {how_to_get(image)}")


_VERSION_RE = re.compile(r"(?:^|[^\d.])(\d+)\.(\d+)(?:\.(\d+))?")


def parse_version(text: str) -> tuple[int, ...]:
    text = re.sub(r"^\d+:", "", text.strip())   # a Debian epoch ("1:10.11.6-0+deb12u1")
    m = _VERSION_RE.search(text)
    if not m:
        return ()
    return tuple(int(g) for g in m.groups() if g is not None)


def image_facts(image_obj, image: str) -> tuple[str, tuple[int, ...]]:
    """(flavor, version) from what the image says: the official images (and ours) set
    MYSQL_VERSION or MARIADB_VERSION; else the repository name and tag."""
    env = {}
    for item in (image_obj.attrs.get("Config") or {}).get("Env") or []:
        name, _, value = item.partition("=")
        env[name] = value
    if env.get("MARIADB_VERSION"):
        return "mariadb", parse_version(env["MARIADB_VERSION"])
    if env.get("MYSQL_VERSION"):
        return "mysql", parse_version(env["MYSQL_VERSION"])
    names = " ".join([image, *image_obj.tags]).lower()
    flavor = "mariadb" if "mariadb" in names else "mysql"
    tag = image.rsplit(":", 1)[1] if ":" in image.rsplit("/", 1)[-1] else ""
    return flavor, parse_version(tag)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def lab_containers(client=None) -> list:
    """Every container with the label innoflush=lab, running or not."""
    client = client or docker_client()
    return client.containers.list(all=True, filters={"label": f"{LABEL}={LABEL_VALUE}"})


def remove_lab_containers(client=None, orphans_only: bool = True) -> list[str]:
    """Remove lab containers left behind; returns their names. With orphans_only, only
    those whose creating process (label innoflush.pid, on this host) is gone."""
    client = client or docker_client()
    removed = []
    for c in lab_containers(client):
        pid = (c.labels or {}).get(f"{LABEL}.pid", "")
        if orphans_only and pid.isdigit() and _pid_alive(int(pid)):
            continue
        with contextlib.suppress(docker.errors.NotFound):
            c.remove(v=True, force=True)
            removed.append(c.name)
    return removed


__all__ = ["DEFAULT_IMAGE", "LABEL", "LABEL_VALUE", "OFFICIAL_IMAGES", "OFFLINE_IMAGE",
           "DockerEngineError", "DockerServerError", "ImageNotFoundError", "docker_client",
           "engine_address", "engine_reason", "get_image", "how_to_get", "image_facts",
           "lab_containers", "parse_version", "remove_lab_containers"]
