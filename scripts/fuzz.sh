#!/usr/bin/env bash
# Builds the fuzz targets with clang and libFuzzer (plus ASan/UBSan) and fuzzes
# each for FUZZ_SECONDS (default 60), starting from a copy of its seed corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh fuzz
for target in rule_loader expression_parser; do
  corpus=$(mktemp -d)
  cp fuzz/corpus/$target/* "$corpus"/
  build/fuzz/fuzz/${target}_fuzz -max_total_time="${FUZZ_SECONDS:-60}" -rss_limit_mb=2048 "$corpus"
  rm -rf "$corpus"
done
