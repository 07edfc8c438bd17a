#!/usr/bin/env bash
# Installs what is missing, builds with warnings as errors, and runs the whole
# test suite twice: optimised, and under AddressSanitizer + UBSan. Then runs
# each libFuzzer target briefly.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=${JOBS:-2}

bash scripts/build.sh release
(cd build/release && ctest --output-on-failure -j "$jobs")

bash scripts/build.sh sanitize
(cd build/sanitize && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j "$jobs")

bash scripts/build.sh fuzz
for target in rule_loader expression_parser; do
  corpus=$(mktemp -d)
  cp fuzz/corpus/$target/* "$corpus"/
  build/fuzz/fuzz/${target}_fuzz -max_total_time="${FUZZ_SECONDS:-20}" -rss_limit_mb=2048 "$corpus"
  rm -rf "$corpus"
done
echo "all tests passed"
