#!/usr/bin/env bash
# The member-side fault campaign (tests/chaos/member_chaos_test.cpp), longer
# than the fixed seeds CI runs (ctest -L chaos):
#
#   scripts/chaos.sh --faults 25 [--seeds 8 | --seed-list 11,12]
#
# Builds ruleplane and ruleplane_chaos_tests (build/release), runs one
# sequence of N faults per seed (random seeds unless --seed-list), prints
# every fault as it happens and the summary line at the end, and keeps the
# output in build/chaos-<time>.log. A failed seed's files are kept in
# $TMPDIR; RULEPLANE_CHAOS_SEEDS=<seed> RULEPLANE_CHAOS_FAULTS=<N>
# build/release/ruleplane_chaos_tests replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
faults=25
seeds=8
list=""
usage() { echo "usage: $0 [--faults N] [--seeds COUNT | --seed-list SEED[,SEED]...]" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --faults) [ $# -ge 2 ] || usage; faults=$2; shift 2 ;;
    --seeds) [ $# -ge 2 ] || usage; seeds=$2; shift 2 ;;
    --seed-list) [ $# -ge 2 ] || usage; list=$2; shift 2 ;;
    *) usage ;;
  esac
done
if [ -z "$list" ]; then
  for ((k = 0; k < seeds; k++)); do list+="${list:+,}$(((RANDOM << 15 | RANDOM) + 100))"; done
fi

cmake -S . -B build/release -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRULEPLANE_WERROR=ON \
  -DRULEPLANE_BENCHMARKS=OFF >/dev/null
cmake --build build/release -j "${JOBS:-2}" --target ruleplane ruleplane_chaos_tests

log="build/chaos-$(date +%Y%m%d-%H%M%S).log"
echo "chaos: seeds $list, $faults faults each; output in $log"
start=$(date +%s)
status=0
RULEPLANE_CHAOS_SEEDS=$list RULEPLANE_CHAOS_FAULTS=$faults build/release/ruleplane_chaos_tests \
  --gtest_color=no 2>&1 | tee "$log" || status=$?
echo "chaos: took $(($(date +%s) - start)) s (seeds $list, $faults faults each)" | tee -a "$log"
exit "$status"
