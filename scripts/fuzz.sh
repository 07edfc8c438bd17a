#!/usr/bin/env bash
# Builds the fuzz targets with clang and libFuzzer (plus ASan/UBSan, the engine
# instrumented too: fuzz/README.md) and fuzzes each for FUZZ_SECONDS (default
# 60), starting from a copy of its seed corpus:
#   bash scripts/fuzz.sh [-j N] [TARGET...]
# TARGET is the name of a fuzz/<TARGET>_fuzz.cpp (default: all of them);
# -j N fuzzes N targets at once. The regress_* inputs are left out of the copy
# (they are large or slow on purpose, and the replay tests run them) unless
# FUZZ_REGRESSIONS=1. Each target's log and findings (crash-*, timeout-*,
# oom-*, leak-*) go to FUZZ_FINDINGS/<target>/ (default /tmp/fuzz_findings).
# FUZZ_ARGS adds libFuzzer options (e.g. "-fork=1 -ignore_crashes=1" to keep
# going after a finding). Exits 1 if anything was found.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=1
if [ "${1:-}" = -j ]; then
  jobs=$2
  shift 2
fi
targets=("$@")
if ((${#targets[@]} == 0)); then
  for source in fuzz/*_fuzz.cpp; do
    source=${source##*/}
    targets+=("${source%_fuzz.cpp}")
  done
fi
seconds=${FUZZ_SECONDS:-60}
findings=${FUZZ_FINDINGS:-/tmp/fuzz_findings}
read -r -a extra_args <<<"${FUZZ_ARGS:-}"

bash scripts/install-deps.sh
bash scripts/build.sh fuzz

# Seeds kept elsewhere in the tree (as in fuzz/CMakeLists.txt).
extra_corpus() {
  case "$1" in
    snapshot_plan) echo examples/snapshots ;;
  esac
}

fuzz_one() {
  local target=$1 out=$findings/$1 corpus marker dir seed
  mkdir -p "$out"
  marker=$(mktemp)
  corpus=$(mktemp -d)
  for dir in fuzz/corpus/"$target" $(extra_corpus "$target"); do
    for seed in "$dir"/*; do
      case "$(basename "$seed")" in
        regress_*) [ -n "${FUZZ_REGRESSIONS:-}" ] || continue ;;
      esac
      cp "$seed" "$corpus"/
    done
  done
  build/fuzz/fuzz/${target}_fuzz -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$out/" "${extra_args[@]}" "$corpus" >"$out/fuzz.log" 2>&1 || true
  rm -rf "$corpus"
  local last found
  last=$(grep -E 'cov:' "$out/fuzz.log" | tail -1 | sed 's/  */ /g' || true)
  [ -n "$last" ] || last=$(grep -m1 -E '^==[0-9]+== ?ERROR' "$out/fuzz.log" || true)
  found=$(find "$out" -maxdepth 1 -type f -newer "$marker" ! -name fuzz.log | sort)
  rm -f "$marker"
  echo "$target: $last"
  if [ -n "$found" ]; then
    echo "$target: FOUND (log: $out/fuzz.log)"
    echo "$found" | sed 's/^/  /'
    return 1
  fi
}

status=0
running=0
for target in "${targets[@]}"; do
  if [ ! -x "build/fuzz/fuzz/${target}_fuzz" ]; then
    echo "fuzz.sh: no target '$target'" >&2
    exit 2
  fi
  fuzz_one "$target" &
  running=$((running + 1))
  if ((running >= jobs)); then
    wait -n || status=1
    running=$((running - 1))
  fi
done
while ((running > 0)); do
  wait -n || status=1
  running=$((running - 1))
done
exit $status
