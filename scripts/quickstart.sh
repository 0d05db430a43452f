#!/usr/bin/env bash
# Set up (idempotent) and run the main job on the simulated phone: collect demonstrations, train a policy
# (experiment=quickstart), evaluate it on held-out device configurations. Ends by printing where everything is.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh

say() { printf '\033[1;34m[quickstart]\033[0m %s\n' "$*"; }
PY=.venv/bin/python

stage() {  # stage "description" command...: each stage skips what an earlier run already did
    local what=$1; shift
    say "$what"
    printf '  $ %s\n' "$*"
    "$@" || { say "failed: $*"; exit 1; }
}

stage "collect 3,210 expert demonstrations (6 tasks x the 35 training snapshots and 500 generated phones, 150 of them right-to-left)" \
    $PY collect.py 'env.snapshots=[train,random:350,heldout:150]' 'env.generator.holdout={locale:[ar-AE]}' \
    env.rtl=mirrored dataset=train_gen500_rtl_mir
stage "train a policy, then 2 rounds of DAgger with the expert (experiment=quickstart)" $PY train.py experiment=quickstart
RUN=checkpoints/quickstart/bc-tf_efficientnet_lite0-seed0
# agent.avoid_repeats: back on a screen it has been on, the policy does not take the same step again (chosen on the
# validation phones: docs/evaluation.md)
stage "evaluate it on the 50 validation phones and the 10 held-out test snapshots (the B-MoCA protocol)" \
    $PY evaluate.py checkpoint=$RUN 'env.snapshots=[val,test]' runs=1 agent.avoid_repeats=true name=quickstart
say "trained policy: $RUN/policy"
say "results: outputs/evaluate/quickstart/results.md (and results.json, success_per_task.png)"
