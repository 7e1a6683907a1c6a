#!/usr/bin/env bash
# `make demo`: the whole product on an embedded default, in about three minutes.
#  1. measure the disk under this directory (quick probe) and keep it as a profile;
#  2. what one connection can commit durably on this disk, beside a consumer SSD without
#     power loss protection and an enterprise SSD with it (built-in published profiles);
#  3. simulate InnoDB on all three: O_DIRECT vs O_DIRECT_NO_FSYNC, 1 and 16 connections;
#  4. the main job: a private MariaDB/MySQL (local binaries, a free port, a datadir under
#     .demo/) under sysbench, `innoflush advise` on it with that profile, the recommended
#     change applied, the load again, predicted beside measured (scripts/demo_live.py).
#     Where the server or sysbench is missing, root with apt installs them (saying so);
#     anyone else gets the command to run, and the demo ends without this step.
# Nothing is left running, and nothing on disk but .demo/ (Ctrl-C included).
set -euo pipefail
innoflush=${1:-.venv/bin/innoflush}
demo_dir=${DEMO_DIR:-$PWD/.demo}
mkdir -p "$demo_dir/probe"
# the demo's measured profile goes to a store of its own, not the user's
export INNOFLUSH_HOME="$demo_dir/home"

# headings in bold on a terminal only: a log file or a pipe gets no escape codes
if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
step() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain"; }

here=$(cd "$(dirname "$0")" && pwd)
python=$(dirname "$innoflush")/python

step "1/4 measuring the storage under $demo_dir/probe (innoflush measure --quick)"
"$innoflush" measure "$demo_dir/probe" --quick --save this-disk --force
echo "(the profile: $INNOFLUSH_HOME/profiles/this-disk.json)"

step "2/4 durable commits per connection (innoflush tps), target 1000 TPS"
for p in this-disk samsung-990-pro samsung-pm9a3; do
  "$innoflush" tps --profile "$p" --target-tps 1000
  echo
done

step "3/4 InnoDB on each device (innoflush simulate): flush method x connections"
for p in this-disk samsung-990-pro samsung-pm9a3; do
  "$innoflush" simulate --profile "$p" --flush-method O_DIRECT,O_DIRECT_NO_FSYNC \
    --connections 1,16 --duration 5
  echo
done
step "4/4 advise a private live server under sysbench; the change applied and measured"
bash "$here/install-system-deps.sh" demo
if command -v sysbench >/dev/null 2>&1; then
  "$python" "$here/demo_live.py" "$innoflush" "$demo_dir" this-disk
else
  echo "step 4 skipped: it needs sysbench and a MariaDB/MySQL server (see above)."
fi
