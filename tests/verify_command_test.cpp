// ruleplane verify, diff and test --coverage, run as a user runs them.
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/run_ruleplane.h"
#include "tests/support/source_paths.h"

namespace {

using namespace ruleplane::testing_support;

TEST(VerifyCommand, CleanTableExitsZeroAndSaysHowLongItTook) {
  CommandResult run = Ruleplane("verify rules/etcd-backup-restore/initialization.yaml");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_TRUE(Contains(run.out, "3149664 states")) << run.out;
  EXPECT_TRUE(Contains(run.out, "0 errors")) << run.out;
  EXPECT_TRUE(Contains(run.out, "took ")) << run.out;
}

TEST(VerifyCommand, ErrorFindingExitsOne) {
  CommandResult run = Ruleplane("verify tests/golden/verify/pdb_rules_swapped.yaml --max-regions 1");
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_TRUE(Contains(run.out, "rule 'not-all-members-ready' matches but is never selected")) << run.out;
  EXPECT_TRUE(Contains(run.out, "masked by 'quorum'")) << run.out;
  EXPECT_TRUE(Contains(run.out, "e.g. ")) << run.out;
}

TEST(VerifyCommand, ParamOverridesAreChecked) {
  CommandResult unknown = Ruleplane("verify --param nope=1 rules/etcd-druid/status.yaml");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_TRUE(Contains(unknown.err, "unknown param 'nope'")) << unknown.err;
  CommandResult bad = Ruleplane("verify --param notReadyGracePeriod=soon rules/etcd-druid/status.yaml");
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_TRUE(Contains(bad.err, "--param notReadyGracePeriod:")) << bad.err;
  CommandResult good = Ruleplane(
      "verify --param notReadyGracePeriod=10m rules/etcd-backup-restore/initialization.yaml "
      "rules/etcd-druid/pdb.yaml");
  EXPECT_EQ(good.exit_code, 2) << "no file of these declares it: " << good.err;
}

TEST(VerifyCommand, LintWarnsAboutCellsVerifyCannotEvaluate) {
  const std::string path = TempPath("snapshot_cell.yaml");
  std::ofstream(path) << R"(apiVersion: ruleplane.dev/v1
kind: DecisionTable
metadata: {name: direct, version: 1.0.0}
spec:
  subject: EtcdCluster
  facts:
    - {name: n, expr: snapshot.etcd.spec.replicas, domain: "int [0, 3]"}
  rules:
    - id: direct
      when: {n: "> snapshot.etcd.status.clusterSize"}
)";
  CommandResult lint = Ruleplane("lint " + path);
  EXPECT_EQ(lint.exit_code, 0) << lint.out;
  EXPECT_TRUE(Contains(lint.out, "warning: verify cannot evaluate this cell: it reads the snapshot"))
      << lint.out;
  CommandResult verify = Ruleplane("verify " + path);
  EXPECT_EQ(verify.exit_code, 1);
  EXPECT_TRUE(Contains(verify.out, "error: cannot verify: verify cannot evaluate this cell")) << verify.out;
}

TEST(DiffCommand, SameFileHasNoDifference) {
  CommandResult run = Ruleplane("diff rules/etcd-druid/pdb.yaml rules/etcd-druid/pdb.yaml");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_TRUE(Contains(run.out, "0 differences")) << run.out;
}

TEST(DiffCommand, VersionsOfThePdbTableDiffer) {
  CommandResult run =
      Ruleplane("diff --rules rules etcd-druid-status-pdb@1 etcd-druid-status-pdb@2 --max-regions 1");
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_TRUE(Contains(run.out, "changed: old selects 'in-sync', new selects 'single-member'")) << run.out;
  EXPECT_TRUE(Contains(run.out, "changed: 'quorum' with different actions")) << run.out;
}

TEST(DiffCommand, SnapshotsWhosePlansDifferAreListed) {
  CommandResult run = Ruleplane(
      "diff --snapshots examples/snapshots --max-regions 1 rules/etcd-druid/status.yaml "
      "tests/golden/verify/status_integer_division.yaml");
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_TRUE(Contains(run.out, "changed: old selects 'minority-not-ready', new selects no rule")) << run.out;
  EXPECT_TRUE(Contains(run.out,
                       "  examples/snapshots/minority-not-ready.json\n"
                       "    old: minority-not-ready: DeletePod(etcd-main-2) {\"name\": \"etcd-main-2\"}\n"
                       "    new: no steps\n"))
      << run.out;
}

TEST(DiffCommand, NeedsTwoSides) {
  EXPECT_EQ(Ruleplane("diff rules/etcd-druid/pdb.yaml").exit_code, 2);
  EXPECT_EQ(Ruleplane("diff rules/etcd-druid/pdb.yaml no-such-rules@1").exit_code, 2);
}

// A --journal that is not a journal is refused before the rule sets are
// compared over their domains: nothing of that comparison is printed.
TEST(DiffCommand, AJournalThatIsNotOneIsRefusedBeforeAnyComparison) {
  const std::string path = ::testing::TempDir() + "/not-a-journal.txt";
  std::ofstream(path) << "not a journal\n";
  CommandResult run =
      Ruleplane("diff --journal " + path + " etcd-druid-status@1 etcd-druid-status@1.5 --rules rules");
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_TRUE(Contains(run.err, path)) << run.err;
  EXPECT_EQ(run.out, "") << "the comparison ran first";
}

// Whole selections: rule sets paired by name, the others named, and the
// snapshots of VERSIONS.md planned with each side as a whole.
TEST(DiffCommand, TheOneAndTwoSelectionsDifferAsVersionsMdSays) {
  CommandResult run = Ruleplane(
      "diff --snapshots examples/snapshots --max-regions 1 --max-evaluations 20000 etcd-druid@1 "
      "etcd-druid@2");
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_TRUE(Contains(run.out, "only in etcd-druid@1: etcd-druid-status-maintenance@1.3.0")) << run.out;
  EXPECT_TRUE(Contains(run.out, "only in etcd-druid@2: etcd-druid-status-scaling@2.2.0")) << run.out;
  EXPECT_TRUE(Contains(run.out, "changed: old selects 'in-sync', new selects 'single-member'")) << run.out;
  EXPECT_TRUE(Contains(run.out,
                       "warning: facts derived differently in the two versions, paired by name all the "
                       "same: n ready;"))
      << run.out;
  const std::vector<std::string> scenarios = {"v2-quorum-lost", "v2-minority-not-ready", "v2-scale-down",
                                              "v2-scale-up", "v2-scale-to-zero"};
  for (const std::string& scenario : scenarios) {
    EXPECT_TRUE(Contains(run.out, "  examples/snapshots/" + scenario + ".json\n")) << scenario << "\n"
                                                                                   << run.out;
  }
  EXPECT_FALSE(Contains(run.out, "  examples/snapshots/v2-pink-of-health.json\n")) << run.out;
  EXPECT_TRUE(Contains(run.out,
                       "  examples/snapshots/v2-quorum-lost.json\n"
                       "    old: quorum-lost: ScaleStatefulSet(etcd-main) {\"replicas\": 0}\n"))
      << run.out;
}

// VERSIONS.md's cluster scenarios, as regions of the observation grid of
// examples/observe_cluster.py: where and how the 1.x and 2.x plans differ.
TEST(DiffCommand, ObservationGridShowsTheVersionsMdDifferencesAsRegions) {
  const std::string grid = TempPath("observations.jsonl");
  ASSERT_EQ(std::system(("cd " + std::string(ruleplane::testing::SourceDir()) +
                         " && python3 examples/observe_cluster.py > " + grid)
                            .c_str()),
            0);
  CommandResult run = Ruleplane("diff --snapshots " + grid +
                                " --max-regions 4 --max-evaluations 1000 etcd-druid@1 etcd-druid@2");
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_TRUE(Contains(run.out, ": 277 of 280 planned differently, by the actions of both plans")) << run.out;
  auto group = [&](const std::string& old_actions, const std::string& new_actions, const std::string& count) {
    return "  old: " + old_actions + "\n  new: " + new_actions + "\n  (" + count + ")\n";
  };
  // 1. Quorum lost: 1.x re-bootstraps from the backup, 2.x only sets the conditions; exactly where 2 * ready
  // <= n.
  EXPECT_TRUE(Contains(
      run.out,
      group("ScaleStatefulSet, WaitForPodsDeleted, MarkRebootstrap, RemoveStatusMember, DeleteMemberLease, "
            "CreateMemberLease, SetClusterSize",
            "no step", "6 snapshots") +
          "    members=1, replicas=1, notReady=1, unknown=0, podNotReady=0, backupFailing=false  "
          "(1 snapshot)"))
      << run.out;
  EXPECT_TRUE(Contains(run.out,
                       "    members=3, replicas=3, notReady in {2, 3}, unknown=0, podNotReady=0, "
                       "backupFailing=false  (2 snapshots)"))
      << run.out;
  EXPECT_TRUE(Contains(run.out,
                       "    members=5, replicas=5, notReady in [3..5], unknown=0, podNotReady=0, "
                       "backupFailing=false  (3 snapshots)"))
      << run.out;
  // 2. A NotReady minority: 1.x deletes its pods, 2.x does nothing.
  EXPECT_TRUE(Contains(run.out, group("DeletePod", "no step", "2 snapshots") +
                                    "    members=3, replicas=3, notReady=1, unknown=0, podNotReady=0, "
                                    "backupFailing=false  (1 snapshot)"))
      << run.out;
  // 3. Scale-down of a healthy cluster: 1.x scales, 2.x refuses with an alert.
  EXPECT_TRUE(Contains(run.out, group("ScaleStatefulSet, SetClusterSize, DeleteMemberLease",
                                      "RemoveStatusMember, SetPdbMinAvailable, RaiseAlert", "2 snapshots")))
      << run.out;
  // 4. Scale-up of a healthy cluster: both render the configuration first, 2.x also sets the conditions.
  EXPECT_TRUE(
      Contains(run.out, group("ApplyEtcdConfigMap, ScaleStatefulSet, CreateMemberLease, SetPdbMinAvailable",
                              "SetEtcdCondition, SetPdbMinAvailable, ApplyEtcdConfigMap, ScaleStatefulSet, "
                              "CreateMemberLease",
                              "3 snapshots")))
      << run.out;
  // 5. Scale to 0: nothing in 1.x, a full snapshot then the scale-down in 2.x.
  EXPECT_TRUE(
      Contains(run.out, group("no step",
                              "RemoveStatusMember, SetEtcdCondition, SetPdbMinAvailable, "
                              "TriggerFullSnapshot, ScaleStatefulSet",
                              "2 snapshots") +
                            "    members in {3, 5}, replicas=0, notReady=0, unknown=0, podNotReady=0, "
                            "backupFailing=false  (2 snapshots)"))
      << run.out;
  // 10. Backups failing: 1.x alerts and raises the budget, 2.x leaves it to monitoring.
  EXPECT_TRUE(Contains(run.out, group("RaiseAlert, SetPdbMinAvailable", "no step", "12 snapshots")))
      << run.out;
}

TEST(TestCommand, CoverageReportsWhatTheTestsMissed) {
  CommandResult run = Ruleplane("test --coverage rules/etcd-druid/pdb.yaml");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_TRUE(Contains(run.out, "coverage etcd-druid-status-pdb@1.0.0: 100.0% (rules 4/4 selected"))
      << run.out;
  const std::string path = TempPath("uncovered.yaml");
  std::ofstream(path) << R"(apiVersion: ruleplane.dev/v1
kind: DecisionTable
metadata: {name: uncovered, version: 1.0.0}
spec:
  subject: EtcdCluster
  hitPolicy: FIRST
  facts:
    - {name: n, expr: snapshot.etcd.spec.replicas}
  rules:
    - id: big
      when: {n: "> 3"}
    - id: small
      when: {n: "<= 3"}
  tests:
    - name: three
      snapshot: {apiVersion: ruleplane.dev/v1, kind: EtcdClusterSnapshot, observedAt: "2024-05-01T10:00:00Z",
                 etcd: {spec: {replicas: 3}}}
      expect: {rules: [small]}
)";
  CommandResult partial = Ruleplane("test --coverage --min-coverage 90 " + path);
  EXPECT_EQ(partial.exit_code, 1) << partial.out << partial.err;
  EXPECT_TRUE(Contains(partial.out, "50.0% (rules 1/2 selected, cell outcomes 2/4)")) << partial.out;
  EXPECT_TRUE(Contains(partial.out, "never selected: rule 'big'")) << partial.out;
  EXPECT_TRUE(Contains(partial.out, "never true: rule 'big' cell n: \"> 3\"")) << partial.out;
  EXPECT_TRUE(Contains(partial.err, "coverage below 90%")) << partial.err;
  EXPECT_EQ(Ruleplane("test --min-coverage 50 " + path).exit_code, 0);
  EXPECT_EQ(Ruleplane("test --min-coverage lots " + path).exit_code, 2);
}

}  // namespace
