#!/usr/bin/env bash
# Configures and builds one flavour of ruleplane into build/<flavour>:
#   release   optimised (-O2), warnings are errors (the default)
#   sanitize  AddressSanitizer + UndefinedBehaviorSanitizer, warnings are errors
#   fuzz      clang + libFuzzer fuzz targets only, the engine instrumented too (fuzz/README.md)
set -euo pipefail
cd "$(dirname "$0")/.."
flavour=${1:-release}
jobs=${JOBS:-2}
case "$flavour" in
  release)  options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DRULEPLANE_WERROR=ON) ;;
  sanitize) options=(-DCMAKE_BUILD_TYPE=Debug -DRULEPLANE_WERROR=ON -DRULEPLANE_SANITIZE=ON -DRULEPLANE_BENCHMARKS=OFF) ;;
  fuzz)     options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DRULEPLANE_LIBFUZZER=ON -DRULEPLANE_BENCHMARKS=OFF) ;;
  *) echo "usage: $0 [release|sanitize|fuzz]" >&2; exit 2 ;;
esac
cmake -S . -B "build/$flavour" "${options[@]}" >/dev/null
if [ "$flavour" = fuzz ]; then
  cmake --build "build/$flavour" -j "$jobs" --target fuzz_targets
else
  cmake --build "build/$flavour" -j "$jobs"
fi
