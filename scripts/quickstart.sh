#!/usr/bin/env bash
# Set up (idempotent) and run the main job on the simulated phone: collect demonstrations, train a policy
# (experiment=quickstart), evaluate it on held-out device configurations. Ends by printing where everything is.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh

say() { printf '\033[1;34m[quickstart]\033[0m %s\n' "$*"; }
PY=.venv/bin/python
NOT_BUILT=3   # exit status of a job that this version of vlui does not have yet (vlui.errors.NotBuiltError)

stage() {  # stage "description" command...
    local what=$1; shift
    say "$what"
    printf '  $ %s\n' "$*"
    set +e; "$@"; local rc=$?; set -e
    if [ $rc -eq $NOT_BUILT ]; then
        say "stopping here: this version of vlui cannot $what yet (see README, Roadmap)."
        exit 0
    fi
    [ $rc -eq 0 ] || { say "failed: $*"; exit $rc; }
}

stage "collect 210 expert demonstrations (6 tasks x 35 training snapshots)" $PY collect.py
stage "train a policy (experiment=quickstart)" $PY train.py experiment=quickstart
POLICY=checkpoints/quickstart/bc-tf_efficientnet_lite0-seed0/policy
say "trained policy: $POLICY"
stage "evaluate it on the 10 held-out test snapshots" $PY evaluate.py checkpoint=$POLICY
