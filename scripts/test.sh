#!/usr/bin/env bash
# Installs what is missing (and builds the Kubernetes binaries once, scripts/build-kubernetes.sh --node,
# and the images, scripts/build-images.sh),
# builds with warnings as errors, and runs the whole
# test suite twice: optimised, and under AddressSanitizer + UBSan (all but e2e, chaos, node and the
# tests that walk whole state spaces). (The fuzz
# targets run over their seed corpus in both; scripts/fuzz.sh fuzzes for real.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# kube-apiserver 1.20.2 for the tests labelled `kubernetes`, and the node's
# kubelet, kube-scheduler, kube-proxy and kubectl (label node): built once per
# machine from Debian's source package, cached outside the repository.
RULEPLANE_KUBE_BIN=$(bash scripts/build-kubernetes.sh --node | tail -n 1)
export RULEPLANE_KUBE_BIN
jobs=${JOBS:-2}

# ctest in build/$1 with the other arguments. A test that hangs fails after
# 20 minutes (the longest take about 6). When a test fails, its failure lines
# are printed once more at the end, where a truncated log still shows them.
run_ctest() {
  local dir=build/$1
  shift
  if (cd "$dir" && ctest --output-on-failure --timeout 1200 -j "$jobs" "$@"); then return 0; fi
  echo "== failures in $dir (from Testing/Temporary/LastTest.log)"
  grep -B2 -A8 -E ': Failure$|Sanitizer|runtime error' "$dir/Testing/Temporary/LastTest.log" | cut -c1-300 | head -n 200 || true
  return 1
}

bash scripts/build.sh release
# The node's images (label `node`), from the binary just built: cached, rebuilt when it changes.
RULEPLANE_IMAGES=$(bash scripts/build-images.sh build/release/ruleplane | tail -n 1)
export RULEPLANE_IMAGES
run_ctest release

bash scripts/build.sh sanitize
# The end-to-end scenarios (label e2e), the fault campaign (label chaos) and
# the node (label node) run once, optimised: they exercise the same code as
# the kubernetes and etcd tests, which run under the sanitizers. So do the
# tests that walk whole state spaces: the two that verify every shipped rule
# set (about 9 minutes each under the sanitizers, 10 s optimised) and four
# that take 2 to 6 s optimised and 2 to 3 minutes under the sanitizers; the
# verifier's and the differ's code runs under the sanitizers in their other
# tests.
exhaustive='rules_verify|VerifyShippedRulesTest\.FindingsAreTheAcceptedOnes'
exhaustive+='|Dep01Safety\.NoScaleToZeroWithAReadyMajorityAndNoPodDeletionWithoutQuorum'
exhaustive+='|VerifyCommand\.CleanTableExitsZeroAndSaysHowLongItTook|DiffCommand\.SnapshotsWhosePlansDifferAreListed'
exhaustive+='|Verify/VerifyGoldenTest\.MatchesExpected/status_integer_division'
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
run_ctest sanitize -LE "e2e|chaos|node" -E "^($exhaustive)( |$)"

echo "all tests passed"
