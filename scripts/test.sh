#!/usr/bin/env bash
# The test suite in two tiers (docs/testing.md):
#
#   bash scripts/test.sh          what CI runs: installs what is missing, builds the Kubernetes binaries and the
#                                 node's images once per machine (cached under /var/cache/ruleplane/), builds with
#                                 warnings as errors and runs every test optimised, then the sanitizer pass
#   bash scripts/test.sh --quick  after every change: the binary and the unit tests, optimised; unit, golden,
#                                 fuzz-corpus and conformance tests and one smoke test per real component
#
# The sanitizer pass (AddressSanitizer + UBSan) runs the unit, golden, fuzz-corpus and conformance tests and the
# real-component tests that exercise ruleplane's own threads, streams and parsers (tests/sanitized-real-tests.txt); the
# other real-component tests spend their time starting servers and waiting, which the sanitizers add nothing to, and
# run once, optimised. Every run ends with a table of its phases and the ten slowest tests (scripts/test-report.py).
set -euo pipefail
cd "$(dirname "$0")/.."
# (--sanitizer-beside is the full run's own: the sanitizer build and its tests without a server, run beside the
# release tests.)
mode=${1:-full}
case "$mode" in
  --quick | full | --sanitizer-beside) ;;
  *) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac
jobs=${JOBS:-2}
report_dir=build/test-report
if [ "$mode" != --sanitizer-beside ]; then
  rm -rf "$report_dir"
  mkdir -p "$report_dir"
fi
phases="$report_dir/phases.tsv"

# A phase's line for the table: name, wall-clock seconds, exit status, and "overlapped" for one that ran beside
# another (its seconds are not added to the total).
record_phase() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4:-}" >>"$phases"; }
# Runs "$@" as the phase named $1.
phase() {
  local name=$1 start=$SECONDS status=0
  shift
  echo "== $name"
  "$@" || status=$?
  record_phase "$name" $((SECONDS - start)) "$status"
  return "$status"
}
# At the end, also after a failure: the work beside stopped, the table printed.
report() {
  [ -z "${kube_build:-}" ] || kill -- -"$kube_build" 2>/dev/null || true
  [ -z "${images_build:-}" ] || kill -- -"$images_build" 2>/dev/null || true
  [ -z "${sanitize_beside:-}" ] || kill -- -"$sanitize_beside" 2>/dev/null || true
  python3 scripts/test-report.py "$report_dir" || true
}
[ "$mode" = --sanitizer-beside ] || trap report EXIT

# ctest in build/$1, the phase's JUnit report kept for the table; the other arguments go to ctest. A test that
# hangs fails after 20 minutes (the longest take about 6). ctest starts the tests that took longest before first;
# what each took is kept beside the other caches (RULEPLANE_CTEST_COSTS), so that a new clone schedules as well
# as the last run did. When a test fails, its failure lines are printed once more, where a truncated log still
# shows them.
run_ctest() {
  local dir=build/$1 junit=$PWD/$report_dir/$2.xml status=0
  local costs=${RULEPLANE_CTEST_COSTS:-/var/cache/ruleplane/ctest-costs}/$1.txt
  local kept=$dir/Testing/Temporary/CTestCostData.txt
  shift 2
  mkdir -p "$(dirname "$kept")" "$(dirname "$costs")"
  [ -f "$kept" ] || [ ! -f "$costs" ] || cp "$costs" "$kept"
  (cd "$dir" && ctest --output-on-failure --timeout 1200 --output-junit "$junit" "$@") || status=$?
  # The labels of the tests, which the JUnit report leaves out.
  (cd "$dir" && ctest --show-only=json-v1) >"${junit%.xml}.labels.json" 2>/dev/null || true
  [ ! -f "$kept" ] || cp "$kept" "$costs"
  if ((status == 0)); then return 0; fi
  echo "== failures in $dir (from Testing/Temporary/LastTest.log)"
  grep -B2 -A8 -E ': Failure$|Sanitizer|runtime error' "$dir/Testing/Temporary/LastTest.log" | cut -c1-300 |
    head -n 200 || true
  return 1
}

# The tests that need no server: every label but those of the real components.
no_server='unit|golden|conformance|fuzz|docs'
# One smoke test per real component, for the quick tier: real etcd, the real kube-apiserver, the S3 server.
smoke='RealDataDir\.TheDatabaseEtcdWroteIsValid|KubeClientTest\.WritesAndReadsAnEtcdWithItsStatusAndScale'
smoke+='|S3ClientTest\.PutGetHeadListDeleteRoundTrip'
# The real-component tests the sanitizer pass runs (the sanitizer build compiles only the files that define them).
sanitized_real_tests=$(grep -v '^#' tests/sanitized-real-tests.txt | paste -sd '|')
# Tests that walk whole state spaces run optimised only: the two that verify every shipped rule set (about
# 9 minutes each under the sanitizers, 10 s optimised), four that take 2 to 6 s optimised and 2 to 3 minutes
# under the sanitizers, the projection's comparison over every bundled rule set and snapshot (121 s, 4-14 s
# optimised) and the verifier's ten thousand rules (33 s); the verifier's, the differ's and the projection's code
# runs under the sanitizers in their other tests.
exhaustive='rules_verify|VerifyShippedRulesTest\.FindingsAreTheAcceptedOnes'
exhaustive+='|Dep01Safety\.NoScaleToZeroWithAReadyMajorityAndNoPodDeletionWithoutQuorum'
exhaustive+='|VerifyCommand\.CleanTableExitsZeroAndSaysHowLongItTook|DiffCommand\.SnapshotsWhosePlansDifferAreListed'
exhaustive+='|Verify/VerifyGoldenTest\.MatchesExpected/status_integer_division'
exhaustive+='|SnapshotProjection\.EveryBundledRuleSetPlansTheSameFromTheProjection'
exhaustive+='|VerifierTest\.TenThousandRulesGiveEveryDeadAndMaskedRuleWithItsCauses'

if [ "$mode" = --quick ]; then
  phase "dependencies" bash scripts/install-deps.sh
  # kube-apiserver 1.20.2 for the Kubernetes smoke test: built once per machine, cached outside the repository.
  RULEPLANE_KUBE_BIN=$(bash scripts/build-kubernetes.sh | tail -n 1)
  export RULEPLANE_KUBE_BIN
  phase "build quick" bash scripts/build.sh quick
  phase "ctest quick: $no_server" run_ctest release quick-no-server -j "$jobs" -L "$no_server"
  phase "ctest quick: smoke" run_ctest release quick-smoke -j "$jobs" -R "^($smoke)$"
  echo "quick tests passed"
  exit 0
fi

# The sanitizer build, then its tests that need no server: run by --sanitizer-beside.
sanitize_beside() {
  local start=$SECONDS status=0
  bash scripts/build.sh sanitize || status=$?
  record_phase "build sanitize (beside the release tests)" $((SECONDS - start)) "$status" overlapped
  ((status == 0)) || return "$status"
  start=$SECONDS
  run_ctest sanitize sanitize-no-server -j "$jobs" -L "$no_server" -E "^($exhaustive)( |$)" || status=$?
  record_phase "ctest sanitize: $no_server (beside the release tests)" $((SECONDS - start)) "$status" overlapped
  return "$status"
}
if [ "$mode" = --sanitizer-beside ]; then
  sanitize_beside
  exit
fi

phase "dependencies" bash scripts/install-deps.sh
# kube-apiserver 1.20.2 for the tests labelled `kubernetes`, and the node's kubelet, kube-scheduler, kube-proxy
# and kubectl (label node): built once per machine from Debian's source package, cached outside the repository.
# On a machine without them, beside the release build: the Go build leaves a core idle while its code generators
# and linker run, and the C++ build fills it.
kube_started=$SECONDS
setsid bash -c 'bash scripts/build-kubernetes.sh --node > build/test-report/kube-bin.txt' &
kube_build=$!
# The binary first, so that the node's images (label `node`) are built from it beside the rest of the build:
# cached, rebuilt when the binary changes (the rest of the build does not relink it); on a machine without them,
# debootstrap mostly waits for Debian's mirror.
phase "build release: the binary" bash scripts/build.sh binary
images_started=$SECONDS
setsid bash -c 'bash scripts/build-images.sh build/release/ruleplane > build/test-report/images.txt' &
images_build=$!
phase "build release (tests, no benchmarks)" bash scripts/build.sh tests
# Waits for what was started beside the release build ($2, at $3 seconds) as the phase "$1 ...: the rest", and
# records its whole time as an overlapped one; its failure ends the run.
await_beside() {
  local status=0
  phase "$1 beside the build: the rest" wait "$2" || status=$?
  record_phase "$1 (beside the release build)" $((SECONDS - $3)) "$status" overlapped
  ((status == 0)) || exit "$status"
}
await_beside "node images" "$images_build" "$images_started"
images_build=
RULEPLANE_IMAGES=$(tail -n 1 "$report_dir/images.txt")
export RULEPLANE_IMAGES
await_beside "kubernetes binaries" "$kube_build" "$kube_started"
kube_build=
RULEPLANE_KUBE_BIN=$(tail -n 1 "$report_dir/kube-bin.txt")
export RULEPLANE_KUBE_BIN
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
# Beside the release tests, which mostly wait for the network and for servers (though on a
# machine with nothing cached they kept both cores busy much of the time: containerd importing the node's images,
# several kube-apiservers), at the lowest CPU and I/O priority so that it takes only what they leave: the
# sanitizer build, then its tests that need no server. Those start nothing and wait for nothing, so being slowed
# down changes only how long they take; their output goes to a log of their own, printed when they fail.
sanitize_log=$report_dir/sanitize-beside.log
setsid nice -n 19 ionice -c 3 bash scripts/test.sh --sanitizer-beside >"$sanitize_log" 2>&1 &
sanitize_beside=$!
# Two at a time, of which at most 4 "worlds" (a real node counts 3, a fault campaign 2, an e2e world 1;
# tests/ctest-resources.json). Three at a time was tried: under the load of a real
# node beside an e2e world and a kube-apiserver test, a lease-renewal test and a peer-TLS move failed.
release_status=0
phase "ctest release: all" run_ctest release release -j "${TEST_JOBS:-$jobs}" \
  --resource-spec-file "$PWD/tests/ctest-resources.json" || release_status=$?
# What of the sanitizer work beside is left once the release tests end.
sanitize_status=0
phase "sanitizer build and tests beside: the rest" wait "$sanitize_beside" || sanitize_status=$?
sanitize_beside=
if ((sanitize_status != 0)); then
  tail -n 200 "$sanitize_log"
  exit "$sanitize_status"
fi
((release_status == 0)) || exit "$release_status"

phase "ctest sanitize: real components" run_ctest sanitize sanitize-real -j "$jobs" -R "^($sanitized_real_tests)"

echo "all tests passed"
