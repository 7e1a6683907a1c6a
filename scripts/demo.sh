#!/usr/bin/env bash
# `make demo`: the main job on an embedded default, no server of your own needed.
#  1. measure the disk under this directory (quick probe) and keep it as a profile;
#  2. what one connection can commit durably on it, beside a consumer SSD without power
#     loss protection and an enterprise SSD with it (built-in published profiles);
#  3. simulate InnoDB on all three: O_DIRECT vs O_DIRECT_NO_FSYNC, 1 and 16 connections.
set -euo pipefail
innoflush=${1:-.venv/bin/innoflush}
demo_dir=${DEMO_DIR:-$PWD/.demo}
mkdir -p "$demo_dir/probe"
# the demo's measured profile goes to a store of its own, not the user's
export INNOFLUSH_HOME="$demo_dir/home"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "1/3 measuring the storage under $demo_dir/probe (innoflush measure --quick)"
"$innoflush" measure "$demo_dir/probe" --quick --save this-disk --force

step "2/3 durable commits per connection (innoflush tps), target 1000 TPS"
for p in this-disk samsung-990-pro samsung-pm9a3; do
  "$innoflush" tps --profile "$p" --target-tps 1000
  echo
done

step "3/3 InnoDB on each device (innoflush simulate): flush method x connections"
for p in this-disk samsung-990-pro samsung-pm9a3; do
  "$innoflush" simulate --profile "$p" --flush-method O_DIRECT,O_DIRECT_NO_FSYNC \
    --connections 1,16 --duration 5
  echo
done
echo "The measured profile is in $INNOFLUSH_HOME/profiles/this-disk.json"
