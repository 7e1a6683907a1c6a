#!/usr/bin/env bash
# Makes sure a Docker engine answers, for the lab's Docker backend and its tests.
#
#   scripts/docker-engine.sh [start]   start dockerd unless an engine already answers (default)
#   scripts/docker-engine.sh status    exit 0 when the engine answers, 1 otherwise
#   scripts/docker-engine.sh stop      stop the dockerd this script started (and its
#                                      containerd); any other engine is left alone
#   scripts/docker-engine.sh run CMD [ARG...]
#                                      run CMD; a dockerd that `start` starts while CMD runs
#                                      is stopped when CMD ends, whatever its outcome (also
#                                      on Ctrl-C), and CMD's exit status is returned. An
#                                      engine that already answered is left running.
#                                      `make test` runs the suite this way.
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
#   INNOFLUSH_DOCKERD_DATA_ROOT, INNOFLUSH_DOCKERD_EXEC_ROOT  dockerd's --data-root and
#                              --exec-root (default dockerd's own: /var/lib/docker,
#                              /var/run/docker). With DOCKER_HOST=unix:///other.sock and its
#                              own pid file they start a second engine beside the system's.
set -uo pipefail

log=${INNOFLUSH_DOCKERD_LOG:-/var/log/innoflush-dockerd.log}
pidfile=${INNOFLUSH_DOCKERD_PIDFILE:-/var/run/docker.pid}
driver=${INNOFLUSH_DOCKER_STORAGE_DRIVER:-vfs}
wait_s=${INNOFLUSH_DOCKERD_WAIT_S:-60}
data_root=${INNOFLUSH_DOCKERD_DATA_ROOT:-}
exec_root=${INNOFLUSH_DOCKERD_EXEC_ROOT:-}
sock=/var/run/docker.sock
case "${DOCKER_HOST:-}" in
  unix://*) sock=${DOCKER_HOST#unix://} ;;
esac
# `run` passes this file to the `start` calls under it: the pids of the engines they start
started_file=${INNOFLUSH_DOCKERD_STARTED_FILE:-}

say() { echo "docker-engine: $*" >&2; }

# Does the engine answer? The CLI honours DOCKER_HOST; curl is the fallback for a socket.
answers() {
  if command -v docker >/dev/null 2>&1; then
    timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1
  elif [ "${DOCKER_HOST:-unix://$sock}" = "unix://$sock" ] && command -v curl >/dev/null 2>&1
  then
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
    say "DOCKER_HOST=$DOCKER_HOST does not answer, and only a local engine (unix://) can" \
      "be started here"
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
    local roots=()
    [ "$sock" != /var/run/docker.sock ] && roots+=(--host="unix://$sock")
    [ -n "$data_root" ] && roots+=(--data-root="$data_root")
    [ -n "$exec_root" ] && roots+=(--exec-root="$exec_root")
    setsid "$bin" --storage-driver="$driver" --iptables=false --ip6tables=false \
      --bridge=none --ip-forward=false --ip-masq=false --pidfile="$pidfile" "${roots[@]}" \
      >>"$log" 2>&1 </dev/null &
    pid=$!
    echo "$pid" >"$pidfile.innoflush"   # ours: `stop` may end it
    [ -n "$started_file" ] && echo "$pid" >>"$started_file"
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

is_dockerd() { [ "$(cat "/proc/$1/comm" 2>/dev/null)" = dockerd ]; }

# Ends a process with SIGTERM, waiting up to 60 s. Returns 1 when it is still there.
end_process() {
  local pid=$1 what=$2
  pid_alive "$pid" || return 0
  say "stopping $what (pid $pid)"
  kill -TERM "$pid" 2>/dev/null
  local deadline=$((SECONDS + 60))
  while pid_alive "$pid" && [ $SECONDS -lt $deadline ]; do sleep 0.5; done
  if pid_alive "$pid"; then
    say "$what (pid $pid) did not stop within 60 s"
    return 1
  fi
}

# Stops the dockerd with this pid, which this script started, and the containerd it runs
# (dockerd ends its own containerd on SIGTERM; one left behind is ended here). A pid that
# is no longer a dockerd (reused after a reboot, say) is left alone.
stop_ours() {
  local pid=$1
  if ! pid_alive "$pid" || ! is_dockerd "$pid"; then
    say "the dockerd this script started (pid $pid) is no longer running"
    rm -f "$pidfile.innoflush"
    return 0
  fi
  local containerd_pid
  containerd_pid=$(cat "${exec_root:-/var/run/docker}/containerd/containerd.pid" 2>/dev/null)
  end_process "$pid" dockerd || return 1
  if [ -n "$containerd_pid" ] && pid_alive "$containerd_pid" \
      && [ "$(cat "/proc/$containerd_pid/comm" 2>/dev/null)" = containerd ]; then
    end_process "$containerd_pid" "dockerd's containerd" || return 1
  fi
  rm -f "$pidfile.innoflush"
  say "stopped"
}

do_stop() {
  local pid=""
  [ -f "$pidfile.innoflush" ] && pid=$(cat "$pidfile.innoflush" 2>/dev/null)
  if [ -z "$pid" ]; then
    say "no dockerd started by this script ($pidfile.innoflush): nothing to stop"
    return 0
  fi
  stop_ours "$pid"
}

# run CMD...: CMD's `start` calls note the engines they start in a file of ours; those,
# and only those, are stopped when CMD ends. The traps keep this shell alive through a
# Ctrl-C (which CMD gets too) so that the engine is still stopped.
do_run() {
  [ $# -gt 0 ] || { echo "usage: $0 run CMD [ARG...]" >&2; return 2; }
  local list rc=0 stop_rc=0 pid
  list=$(mktemp "${TMPDIR:-/tmp}/innoflush-dockerd-started.XXXXXX") || return 1
  trap 'say "interrupted: stopping what was started"' INT TERM
  INNOFLUSH_DOCKERD_STARTED_FILE=$list "$@" || rc=$?
  while read -r pid; do
    [ -n "$pid" ] && { stop_ours "$pid" || stop_rc=1; }
  done <"$list"
  rm -f "$list"
  trap - INT TERM
  [ "$rc" -ne 0 ] && return "$rc"
  return "$stop_rc"
}

case "${1:-start}" in
  start) do_start ;;
  status) do_status ;;
  stop) do_stop ;;
  run) shift; do_run "$@" ;;
  *) echo "usage: $0 [start|status|stop|run CMD...]" >&2; exit 2 ;;
esac
