#!/usr/bin/env bash
# Configures and builds one flavour of ruleplane into build/<flavour>:
#   release   optimised (-O2), warnings are errors (the default)
#   sanitize  AddressSanitizer + UndefinedBehaviorSanitizer, warnings are errors
#   fuzz      clang + libFuzzer fuzz targets only, the engine instrumented too (fuzz/README.md)
#   binary    the ruleplane binary alone, optimised, into build/release (no tests, benchmarks
#             or fuzz targets: scripts/run.sh); `release` later configures the rest again
set -euo pipefail
cd "$(dirname "$0")/.."
flavour=${1:-release}
jobs=${JOBS:-2}
case "$flavour" in
  release)  options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DRULEPLANE_WERROR=ON -DRULEPLANE_TESTS=ON -DRULEPLANE_BENCHMARKS=ON) ;;
  binary)   options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DRULEPLANE_WERROR=ON -DRULEPLANE_TESTS=OFF -DRULEPLANE_BENCHMARKS=OFF) ;;
  sanitize) options=(-DCMAKE_BUILD_TYPE=Debug -DRULEPLANE_WERROR=ON -DRULEPLANE_SANITIZE=ON -DRULEPLANE_BENCHMARKS=OFF) ;;
  fuzz)     options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DRULEPLANE_LIBFUZZER=ON -DRULEPLANE_BENCHMARKS=OFF) ;;
  *) echo "usage: $0 [release|sanitize|fuzz|binary]" >&2; exit 2 ;;
esac
directory=build/$flavour
[ "$flavour" = binary ] && directory=build/release
cmake -S . -B "$directory" "${options[@]}" >/dev/null
case "$flavour" in
  fuzz)   cmake --build "$directory" -j "$jobs" --target fuzz_targets ;;
  binary) cmake --build "$directory" -j "$jobs" --target ruleplane ;;
  *)      cmake --build "$directory" -j "$jobs" ;;
esac
