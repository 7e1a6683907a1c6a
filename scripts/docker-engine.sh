#!/usr/bin/env bash
# Makes sure a Docker engine answers, for the lab's Docker backend and its tests.
#
#   scripts/docker-engine.sh [start]   start dockerd unless an engine already answers (default)
#   scripts/docker-engine.sh status    exit 0 when the engine answers, 1 otherwise
#   scripts/docker-engine.sh stop      stop the dockerd whose pid is in the pid file
#
# An engine that already answers (systemd's docker.service, Docker Desktop, a remote
# DOCKER_HOST) is used as it is. Otherwise, as root, dockerd is started in the background
# the way this machine's CI needs it (no systemd, no registry, maybe no overlayfs):
#   dockerd --storage-driver=vfs --iptables=false --ip6tables=false --bridge=none
#           --ip-forward=false --ip-masq=false
# The lab's containers use host networking and bind 127.0.0.1, so no bridge, NAT or
# iptables rules are needed. vfs copies an image's layers for every container; the lab's
# offline image is a single layer (docker/build-offline-image.sh), which keeps that cheap.
#
# Environment:
#   INNOFLUSH_DOCKERD_LOG      dockerd's log      (default /var/log/innoflush-dockerd.log)
#   INNOFLUSH_DOCKERD_PIDFILE  dockerd's pid file (default /var/run/docker.pid)
#   INNOFLUSH_DOCKER_STORAGE_DRIVER  storage driver (default vfs; overlay2 is faster where
#                              the kernel and the backing filesystem allow it)
#   INNOFLUSH_DOCKERD_WAIT_S   how long to wait for the socket to answer (default 60)
set -uo pipefail

log=${INNOFLUSH_DOCKERD_LOG:-/var/log/innoflush-dockerd.log}
pidfile=${INNOFLUSH_DOCKERD_PIDFILE:-/var/run/docker.pid}
driver=${INNOFLUSH_DOCKER_STORAGE_DRIVER:-vfs}
wait_s=${INNOFLUSH_DOCKERD_WAIT_S:-60}
sock=/var/run/docker.sock

say() { echo "docker-engine: $*" >&2; }

# Does the engine answer? The CLI honours DOCKER_HOST; curl is the fallback without one.
answers() {
  if command -v docker >/dev/null 2>&1; then
    timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1
  elif [ -z "${DOCKER_HOST:-}" ] && command -v curl >/dev/null 2>&1; then
    [ "$(timeout 10 curl -s --unix-socket "$sock" http://localhost/_ping 2>/dev/null)" = OK ]
  else
    return 1
  fi
}

server_version() {
  timeout 10 docker version --format '{{.Server.Version}} ({{.Server.APIVersion}})' \
    2>/dev/null || echo "?"
}

dockerd_bin() {
  command -v dockerd 2>/dev/null || { [ -x /usr/sbin/dockerd ] && echo /usr/sbin/dockerd; } \
    || { [ -x /usr/bin/dockerd ] && echo /usr/bin/dockerd; }
}

pid_alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }

do_status() {
  if answers; then
    say "the engine answers: version $(server_version)"
    return 0
  fi
  say "no Docker engine answers at ${DOCKER_HOST:-unix://$sock}"
  return 1
}

do_start() {
  if answers; then
    say "the engine already answers: version $(server_version)"
    return 0
  fi
  if [ -n "${DOCKER_HOST:-}" ] && [ "${DOCKER_HOST}" != "unix://$sock" ]; then
    say "DOCKER_HOST=$DOCKER_HOST does not answer, and only a local engine can be started here"
    return 1
  fi
  local bin
  bin=$(dockerd_bin) || true
  if [ -z "$bin" ]; then
    say "dockerd is not installed (apt-get install docker.io, or make system-deps as root)"
    return 1
  fi
  if [ "$(id -u)" -ne 0 ]; then
    say "no engine answers and starting dockerd needs root: sudo $0 start"
    return 1
  fi
  local pid=""
  [ -f "$pidfile" ] && pid=$(cat "$pidfile" 2>/dev/null)
  if pid_alive "$pid"; then
    say "dockerd (pid $pid) is running but does not answer yet: waiting"
  else
    [ -n "$pid" ] && rm -f "$pidfile"   # stale: dockerd refuses to start with it
    mkdir -p "$(dirname "$log")"
    say "starting $bin (storage driver $driver), log: $log"
    local t0=$SECONDS
    # setsid: the engine outlives this script and make, and no Ctrl-C of theirs reaches it
    setsid "$bin" --storage-driver="$driver" --iptables=false --ip6tables=false \
      --bridge=none --ip-forward=false --ip-masq=false --pidfile="$pidfile" \
      >>"$log" 2>&1 </dev/null &
    pid=$!
    echo "$pid" >"$pidfile.innoflush"   # ours: `stop` may end it
    START_T0=$t0
  fi
  local deadline=$((SECONDS + wait_s))
  while [ $SECONDS -lt $deadline ]; do
    if answers; then
      say "the engine answers after $((SECONDS - ${START_T0:-$SECONDS})) s: version" \
        "$(server_version), pid $pid"
      return 0
    fi
    if ! pid_alive "$pid"; then
      say "dockerd exited while starting; the end of $log:"
      tail -n 15 "$log" | sed 's/^/    /' >&2
      return 1
    fi
    sleep 0.5
  done
  say "dockerd (pid $pid) did not answer within $wait_s s; the end of $log:"
  tail -n 15 "$log" | sed 's/^/    /' >&2
  return 1
}

do_stop() {
  local pid=""
  [ -f "$pidfile" ] && pid=$(cat "$pidfile" 2>/dev/null)
  if ! pid_alive "$pid"; then
    say "no dockerd running from $pidfile"
    return 0
  fi
  say "stopping dockerd (pid $pid)"
  kill -TERM "$pid"
  local deadline=$((SECONDS + 60))
  while pid_alive "$pid" && [ $SECONDS -lt $deadline ]; do sleep 0.5; done
  if pid_alive "$pid"; then
    say "dockerd (pid $pid) did not stop within 60 s"
    return 1
  fi
  rm -f "$pidfile.innoflush"
  say "stopped"
}

case "${1:-start}" in
  start) do_start ;;
  status) do_status ;;
  stop) do_stop ;;
  *) echo "usage: $0 [start|status|stop]" >&2; exit 2 ;;
esac
