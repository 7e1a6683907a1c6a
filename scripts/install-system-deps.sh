#!/usr/bin/env bash
# Installs the real programs the test suite uses, when they are missing:
#   fio            - the cross-check engine of `innoflush measure --engine fio`
#   mariadb-server - the real server the advisor tests start in a temporary datadir
# Needs root (apt-get). Without it, says so loudly; under CI=true that is an error,
# because the real-server tests must run there.
set -uo pipefail

need=()
command -v fio >/dev/null 2>&1 || need+=(fio)
if ! command -v mariadbd >/dev/null 2>&1 && ! [ -x /usr/sbin/mariadbd ]; then
  need+=(mariadb-server mariadb-client)
fi
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "!!! missing test programs: ${need[*]} (install them: apt-get install ${need[*]})" >&2
  if [ "${CI:-}" = "true" ]; then exit 1; fi
  exit 0
fi

echo "installing ${need[*]} with apt-get ..." >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null || { echo "apt-get update failed" >&2; exit 1; }
# policy-rc.d keeps the package from starting a system-wide server: the tests start
# their own, on a free port, in a temporary datadir.
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
