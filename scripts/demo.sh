#!/usr/bin/env bash
# `make demo`: the whole pipeline on an embedded default, in a few minutes.
#  1. measure the disk under this directory (quick probe) and keep it as a profile;
#  2. the lab: start real MariaDB/MySQL servers from the local binaries on that disk, one
#     per flush method and connection count, drive an insert workload, advise each server,
#     and put measured beside predicted (the model on the profile of step 1) — skipped,
#     with how to get a server, when none is installed;
#  3. what one connection can commit durably on this disk, beside a consumer SSD without
#     power loss protection and an enterprise SSD with it (built-in published profiles);
#  4. simulate InnoDB on all three: O_DIRECT vs O_DIRECT_NO_FSYNC, 1 and 16 connections.
# LAB_DURATION (seconds per lab run, default 10) shortens or lengthens step 2.
set -euo pipefail
innoflush=${1:-.venv/bin/innoflush}
demo_dir=${DEMO_DIR:-$PWD/.demo}
lab_duration=${LAB_DURATION:-10}
mkdir -p "$demo_dir/probe" "$demo_dir/lab"
# the demo's measured profile goes to a store of its own, not the user's
export INNOFLUSH_HOME="$demo_dir/home"

# headings in bold on a terminal only: a log file or a pipe gets no escape codes
if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
step() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain"; }

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

step "1/4 measuring the storage under $demo_dir/probe (innoflush measure --quick)"
"$innoflush" measure "$demo_dir/probe" --quick --save this-disk --force

step "2/4 the lab: real servers on this disk, measured beside predicted (innoflush lab run)"
if have_server; then
  echo "4 runs of ${lab_duration} s: O_DIRECT and O_DIRECT_NO_FSYNC, 1 and 4 connections;" \
       "each a fresh server in $demo_dir/lab, removed afterwards"
  "$innoflush" lab run --backend local --profile this-disk --datadir-on "$demo_dir/lab" \
    --flush-method O_DIRECT,O_DIRECT_NO_FSYNC --trx-commit 1 --connections 1,4 \
    --duration "$lab_duration" --buffer-pool 256M
else
  echo "no MariaDB/MySQL server binaries (mariadbd/mysqld) on this machine: lab step skipped."
  echo "Get one with: sudo apt-get install mariadb-server   (the lab starts its own servers"
  echo "on free ports in a temporary datadir; none of the system's is used), or run"
  echo "\`innoflush lab run --backend docker --image mariadb:10.11\` where Docker is available."
fi

step "3/4 durable commits per connection (innoflush tps), target 1000 TPS"
for p in this-disk samsung-990-pro samsung-pm9a3; do
  "$innoflush" tps --profile "$p" --target-tps 1000
  echo
done

step "4/4 InnoDB on each device (innoflush simulate): flush method x connections"
for p in this-disk samsung-990-pro samsung-pm9a3; do
  "$innoflush" simulate --profile "$p" --flush-method O_DIRECT,O_DIRECT_NO_FSYNC \
    --connections 1,16 --duration 5
  echo
done
echo "The measured profile is in $INNOFLUSH_HOME/profiles/this-disk.json"
