#!/usr/bin/env bash
# Configures and builds one flavour of ruleplane into build/<flavour>:
#   release   optimised (-O2), warnings are errors (the default); tests and benchmarks
#   tests     as release, without the benchmarks (what scripts/test.sh runs), and the tests' own code (test
#             files, harnesses) at -O1: a quarter less to compile (5 test files: 63 against 47 CPU-seconds).
#             The libraries compile in batches of eight files, as in sanitize (the controller, member and
#             adapter libraries: 166 CPU-seconds against 369)
#             At -O0 (39 CPU-seconds) the tests that walk the shipped rules took 3 to 7 times as long: the
#             linker keeps one copy of each inline function, and it kept the test objects' unoptimised ones
#   quick     as tests: the binary, the unit tests and the smoke tests only (scripts/test.sh --quick)
#   sanitize  AddressSanitizer + UndefinedBehaviorSanitizer at -O1 (assertions on, line tables only: the
#             sanitizers' reports still name file and line), warnings are errors; the unit tests and, of the
#             real-component suites, the files that define the tests the sanitizer pass runs
#             (tests/sanitized-real-tests.txt). The tests' own code (test files, harnesses) at -O0: it
#             compiles in about half the time (4 test files: 141 against 73 CPU-seconds), and the tests spend
#             their time in the libraries. Everything at -O0 was tried: the tests without a server took twice
#             as long (651 s against about 300 s on 2 cores), and no run was shorter. The libraries compile in
#             batches of eight files (RULEPLANE_UNITY_BUILD, CMakeLists.txt): about half the CPU. Not in
#             quick and release: a change to one file recompiles its batch, which would be paid after every edit
#   fuzz      clang + libFuzzer fuzz targets only, the engine instrumented too (fuzz/README.md)
#   binary    the ruleplane binary alone, optimised and batched as in tests, into build/release (no tests,
#             benchmarks or fuzz targets: scripts/run.sh); `tests` later configures the rest again
# Every flavour compiles through ccache when it is there, with its cache beside the Kubernetes
# binaries (RULEPLANE_CCACHE_DIR, default /var/cache/ruleplane/ccache), keyed on paths relative to
# the checkout so that another clone of the same sources hits it.
set -euo pipefail
cd "$(dirname "$0")/.."
flavour=${1:-release}
jobs=${JOBS:-2}
# The test executables of real components (tests/<suite>/) each flavour builds; the quick tier
# and the sanitizer pass run none of e2e, chaos and node.
all_suites="etcd;kubernetes;objectstore;e2e;chaos;node"
suites_without_worlds="etcd;kubernetes;objectstore"
# The optimised flavours keep line tables only (-g1): backtraces and profiles still name file and line, and a
# compile takes a third less than with full debug information.
optimised=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" -DRULEPLANE_WERROR=ON)
case "$flavour" in
  release)  options=("${optimised[@]}" -DRULEPLANE_TESTS=ON -DRULEPLANE_BENCHMARKS=ON
                     "-DRULEPLANE_TEST_SUITES=$all_suites" -DRULEPLANE_TEST_CODE_FLAGS= -DRULEPLANE_UNITY_BUILD=OFF) ;;
  tests)    options=("${optimised[@]}" -DRULEPLANE_TESTS=ON -DRULEPLANE_BENCHMARKS=OFF
                     "-DRULEPLANE_TEST_SUITES=$all_suites" -DRULEPLANE_TEST_CODE_FLAGS=-O1 -DRULEPLANE_UNITY_BUILD=ON) ;;
  quick)    options=("${optimised[@]}" -DRULEPLANE_TESTS=ON -DRULEPLANE_BENCHMARKS=OFF
                     "-DRULEPLANE_TEST_SUITES=$suites_without_worlds" -DRULEPLANE_TEST_CODE_FLAGS=-O1
                     -DRULEPLANE_UNITY_BUILD=OFF) ;;
  binary)   options=("${optimised[@]}" -DRULEPLANE_TESTS=OFF -DRULEPLANE_BENCHMARKS=OFF -DRULEPLANE_UNITY_BUILD=ON) ;;
  sanitize) options=(-DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" -DRULEPLANE_WERROR=ON -DRULEPLANE_SANITIZE=ON -DRULEPLANE_BENCHMARKS=OFF
                     "-DRULEPLANE_TEST_SUITES=$suites_without_worlds" "-DRULEPLANE_REAL_TESTS=$PWD/tests/sanitized-real-tests.txt"
                     -DRULEPLANE_TEST_CODE_FLAGS=-O0 -DRULEPLANE_UNITY_BUILD=ON) ;;
  fuzz)     options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DRULEPLANE_LIBFUZZER=ON -DRULEPLANE_BENCHMARKS=OFF) ;;
  *) echo "usage: $0 [release|tests|quick|sanitize|fuzz|binary]" >&2; exit 2 ;;
esac
directory=build/$flavour
case "$flavour" in binary | tests | quick) directory=build/release ;; esac
if command -v ccache >/dev/null; then
  export CCACHE_DIR=${RULEPLANE_CCACHE_DIR:-/var/cache/ruleplane/ccache} CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
  mkdir -p "$CCACHE_DIR" && ccache --max-size=8G >/dev/null
  options+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$directory" "${options[@]}" >/dev/null
case "$flavour" in
  fuzz)   cmake --build "$directory" -j "$jobs" --target fuzz_targets ;;
  binary) cmake --build "$directory" -j "$jobs" --target ruleplane ;;
  *)      cmake --build "$directory" -j "$jobs" ;;
esac
