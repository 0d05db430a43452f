#!/usr/bin/env bash
# Set up (idempotent) and run the test suite, in parallel: one pytest-xdist worker per core (VLUI_TEST_WORKERS=N
# to choose; 0 runs in this process, for a debugger). Arguments go to pytest:
#   bash scripts/test.sh                           # everything
#   bash scripts/test.sh --fast                    # the fast tier, for the inner loop (docs/development.md)
#   bash scripts/test.sh -m "not slow"             # skip the long tests
#   bash scripts/test.sh tests/test_config.py -x   # one file, stop at the first failure
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh --tests
# the fast tier: the unit tests but those that need the expert's episodes on every snapshot, and one integration
# test per job on its tiny configuration (marked fast)
tier=()
if [ "${1:-}" = "--fast" ]; then shift; tier=(-m "fast or not (slow or integration or episodes)"); fi
printf '\033[1;34m[test]\033[0m running pytest %s\n' "$*"
# worksteal: a worker with nothing left takes tests queued for another (the suite's longest tests run first)
workers="${VLUI_TEST_WORKERS:-auto}"
if [ "$workers" = "0" ]; then exec .venv/bin/python -m pytest -n 0 ${tier[@]+"${tier[@]}"} "$@"; fi
# one worker per core: each (and the train.py / evaluate.py it starts) gets its share of the cores as torch threads.
# More threads than cores spin against each other: with both cores busy, a tiny policy's forward pass took 1.2 s
# instead of 8 ms.
cores="$(nproc)"
case "$workers" in
  ''|*[!0-9]*) n="$cores" ;;  # auto, logical: one worker per core
  *) n="$workers" ;;
esac
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(( n < cores ? cores / n : 1 ))}"
exec .venv/bin/python -m pytest -n "$workers" --dist worksteal ${tier[@]+"${tier[@]}"} "$@"
