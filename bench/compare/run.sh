#!/usr/bin/env bash
# ruleplane side by side with GoRules ZEN and json-rules-engine, in one run, on
# the same table (bench/compare/tables/) and the same 100,000 inputs:
# installs what is missing (Debian packages; the npm peers locally, into
# bench/compare/node_modules), builds ruleplane in Release, generates the
# inputs, runs the three engines, checks that every answer agrees, and prints
# the table. Exits 1 when any two engines disagree on any input.
#
#   bash bench/compare/run.sh
#
# Environment: COMPARE_BUILD (build directory, default build/compare),
# COMPARE_INPUTS (100000), COMPARE_REPETITIONS (timed passes over all inputs:
# 5 for ruleplane), COMPARE_PEER_REPETITIONS (3 for ZEN and json-rules-engine,
# which take far longer per pass), COMPARE_BATCH_REPETITIONS (3).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
compare=$root/bench/compare
build=${COMPARE_BUILD:-$root/build/compare}
inputs_count=${COMPARE_INPUTS:-100000}
repetitions=${COMPARE_REPETITIONS:-5}
peer_repetitions=${COMPARE_PEER_REPETITIONS:-3}
batch_repetitions=${COMPARE_BATCH_REPETITIONS:-3}
results=$build/compare-results
inputs=$build/compare-inputs.jsonl

step() { echo "== $*" >&2; }

step "dependencies"
bash "$root/scripts/install-deps.sh"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y --no-install-recommends nodejs npm
fi
(
  cd "$compare"
  # npm ci refuses a lock file that lacks some platform's optional ZEN binary
  # (not every platform is published for every version); npm install keeps
  # the locked versions and picks this platform's binary.
  if ! npm ci --no-audit --no-fund --loglevel=silent >&2; then
    npm install --no-audit --no-fund --no-save --loglevel=error >&2
  fi
)

step "build (Release) in $build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DRULEPLANE_TESTS=OFF -DRULEPLANE_BENCHMARKS=ON >/dev/null
cmake --build "$build" -j2 --target ruleplane ruleplane_compare >&2

step "inputs: $inputs_count documents"
node "$compare/generate.js" "$inputs" "$inputs_count"
rm -rf "$results"
mkdir -p "$results/decisions"

step "ruleplane in process ($repetitions repetitions)"
"$build/bench/compare/ruleplane_compare" --inputs "$inputs" --decisions "$results/decisions" \
  --repetitions "$repetitions" \
  --table "first=$compare/tables/status-first.yaml" --table "collect=$compare/tables/status-collect.yaml" \
  >"$results/ruleplane.json"

step "ruleplane plan --batch, whole process ($batch_repetitions repetitions)"
TIMEFORMAT='%R %U %S'  # elapsed, user and system seconds
for policy in first collect; do
  for ((r = 0; r < batch_repetitions; ++r)); do
    # A failed line is kept in the output (and reported as a disagreement).
    { time "$build/ruleplane" plan --rules "$compare/tables/status-$policy.yaml" --batch "$inputs" \
      >"$results/batch-$policy.jsonl" 2>"$results/batch-$policy.err" || true; } 2>>"$results/batch-$policy.times"
  done
done

step "GoRules ZEN and json-rules-engine ($peer_repetitions repetitions)"
node "$compare/peers.js" --inputs "$inputs" --decisions "$results/decisions" \
  --repetitions "$peer_repetitions" >"$results/peers.json"

step "answers and timings"
node "$compare/report.js" "$results" "$inputs"
