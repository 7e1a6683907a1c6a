#!/usr/bin/env bash
# Installs the real programs the test suite uses, when they are missing:
#   fio            - the cross-check engine of `innoflush measure --engine fio`
#   mariadb-server - the real server the advisor tests start in a temporary datadir
#   docker.io      - the Docker engine and CLI of the lab's Docker backend tests
#                    (scripts/docker-engine.sh starts it; it is not started here)
#   debootstrap    - builds the offline MariaDB image (docker/build-offline-image.sh)
#   sysbench       - the user's-own-load tests of `lab validate --workload-cmd`
#   prometheus-node-exporter - serves the `--prom` files through its textfile
#                    collector in the tests (the tests start it on a loopback port)
#   chromium, chromium-driver - the headless browser the --html page tests open the
#                    pages in (tests/helpers/browser.py)
# Needs root (apt-get). Without it, says so loudly; under CI=true that is an error,
# because the real-server tests must run there.
#   install-system-deps.sh demo   only what `make demo` uses (mariadb-server, sysbench);
#                                 without root it prints the command and exits 0
set -uo pipefail
set_name=${1:-test}

need=()
have_server() {
  local name dir
  for name in mariadbd mysqld; do
    command -v "$name" >/dev/null 2>&1 && return 0
    for dir in /usr/sbin /usr/local/sbin /usr/local/mysql/bin /usr/libexec; do
      [ -x "$dir/$name" ] && return 0
    done
  done
  return 1
}
if [ "$set_name" = demo ]; then
  have_server || need+=(mariadb-server mariadb-client)
  command -v sysbench >/dev/null 2>&1 || need+=(sysbench)
  [ ${#need[@]} -eq 0 ] && exit 0
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "the demo's live server needs: ${need[*]} — install them with:"
    echo "  sudo apt-get install ${need[*]}"
    exit 0
  fi
fi
if [ "$set_name" != demo ]; then
command -v fio >/dev/null 2>&1 || need+=(fio)
have_server || need+=(mariadb-server mariadb-client)
if ! command -v dockerd >/dev/null 2>&1 && ! [ -x /usr/sbin/dockerd ] \
    || ! command -v docker >/dev/null 2>&1; then
  need+=(docker.io)
fi
if ! command -v debootstrap >/dev/null 2>&1 && ! [ -x /usr/sbin/debootstrap ]; then
  need+=(debootstrap)
  # the Debian archive's keys, for debootstrap to check what it downloads (Ubuntu lacks them)
  [ -f /usr/share/keyrings/debian-archive-keyring.gpg ] || need+=(debian-archive-keyring)
fi
command -v sysbench >/dev/null 2>&1 || need+=(sysbench)
command -v prometheus-node-exporter >/dev/null 2>&1 \
  || [ -x /usr/bin/prometheus-node-exporter ] || need+=(prometheus-node-exporter)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
fi
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "!!! missing test programs: ${need[*]} (install them: apt-get install ${need[*]})" >&2
  if [ "${CI:-}" = "true" ]; then exit 1; fi
  exit 0
fi

echo "installing ${need[*]} with apt-get (Debian's packages; no server is started) ..." >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null || { echo "apt-get update failed" >&2; exit 1; }
# policy-rc.d keeps the packages from starting a system-wide server or engine: the tests
# start their own server, on a free port, in a temporary datadir, and `make docker-ready`
# starts dockerd the way it needs it (node_exporter too: the tests start their own).
policy=/usr/sbin/policy-rc.d
created_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && created_policy=1
fi
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
rc=$?
[ "$created_policy" = 1 ] && rm -f "$policy"
if [ $rc -ne 0 ]; then echo "apt-get install ${need[*]} failed" >&2; exit 1; fi
exit 0
