#!/usr/bin/env bash
# The fault campaigns, longer than the fixed seeds CI runs (ctest -L chaos):
# by default the member-side one (tests/chaos/member_chaos_test.cpp); with
# --kubernetes the one with controller replicas, the test kubelet and the API
# server's audit log (tests/chaos/controller_chaos_test.cpp; needs the
# Kubernetes binaries, $RULEPLANE_KUBE_BIN or scripts/build-kubernetes.sh).
#
#   scripts/chaos.sh [--kubernetes] --faults 25 [--seeds 8 | --seed-list 11,12]
#
# Builds ruleplane and ruleplane_chaos_tests (build/release), runs one
# sequence of N faults per seed (random seeds unless --seed-list), prints
# every fault as it happens and the summary line at the end, and keeps the
# output in build/chaos-<time>.log. A failed seed's files are kept in
# $TMPDIR; RULEPLANE_CHAOS_SEEDS=<seed> RULEPLANE_CHAOS_FAULTS=<N>
# build/release/ruleplane_chaos_tests --gtest_filter='MemberChaos.*' (or
# 'ControllerChaos.*') replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
faults=25
seeds=8
list=""
campaign='MemberChaos.*'
usage() { echo "usage: $0 [--kubernetes] [--faults N] [--seeds COUNT | --seed-list SEED[,SEED]...]" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --kubernetes) campaign='ControllerChaos.*'; shift ;;
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
echo "chaos: $campaign, seeds $list, $faults faults each; output in $log"
start=$(date +%s)
status=0
RULEPLANE_CHAOS_SEEDS=$list RULEPLANE_CHAOS_FAULTS=$faults build/release/ruleplane_chaos_tests \
  --gtest_filter="$campaign" --gtest_color=no 2>&1 | tee "$log" || status=$?
echo "chaos: took $(($(date +%s) - start)) s ($campaign, seeds $list, $faults faults each)" | tee -a "$log"
exit "$status"
