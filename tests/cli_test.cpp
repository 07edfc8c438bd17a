// The ruleplane command, run as a user runs it: arguments in, exit code and
// output out.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/run_ruleplane.h"

namespace {

using namespace ruleplane::testing_support;

TEST(Cli, PlanOfBundledExampleShowsSteps) {
  CommandResult run = Ruleplane("plan examples/snapshots/quorum-lost.json");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(Contains(run.out, "etcd-druid-status@")) << run.out;
  EXPECT_TRUE(Contains(run.out, "ACTION")) << run.out;
}

TEST(Cli, PlanWorksFromAnyDirectoryWithBundledRules) {
  const std::string snapshot = std::string(RULEPLANE_SOURCE_DIR) + "/examples/snapshots/pink-of-health.json";
  const std::string out = TempPath("out");
  const std::string command =
      std::string("cd / && ") + RULEPLANE_BINARY + " plan -o json " + snapshot + " >" + out + " 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << Slurp(out);
  EXPECT_TRUE(Contains(Slurp(out), "\"kind\": \"Plan\""));
}

TEST(Cli, PlanReadsStandardInputAndPrintsJsonAndYaml) {
  CommandResult json =
      Ruleplane("plan - -o json", std::string(RULEPLANE_SOURCE_DIR) + "/examples/snapshots/quorum-lost.json");
  EXPECT_EQ(json.exit_code, 0) << json.err;
  EXPECT_TRUE(Contains(json.out, "\"idempotencyKey\": \"sha256:")) << json.out;
  CommandResult yaml = Ruleplane("plan examples/snapshots/quorum-lost.json -o yaml");
  EXPECT_EQ(yaml.exit_code, 0) << yaml.err;
  EXPECT_TRUE(Contains(yaml.out, "kind: Plan")) << yaml.out;
  EXPECT_TRUE(Contains(yaml.out, "observedAt:")) << yaml.out;
}

TEST(Cli, BadJsonNamesTheByteOffsetAndExits2) {
  const std::string path = WriteTemp("bad.json", "{\"apiVersion\": \"ruleplane.dev/v1\",\n \"kind\": }");
  CommandResult run = Ruleplane("plan " + path);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(Contains(run.err, "byte")) << run.err;
}

TEST(Cli, MissingSnapshotFileExits2) {
  CommandResult run = Ruleplane("plan /nonexistent.json");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(Contains(run.err, "cannot read '/nonexistent.json'")) << run.err;
}

TEST(Cli, UnknownOptionsAndCommandsExit2) {
  EXPECT_EQ(Ruleplane("plan --frobnicate x.json").exit_code, 2);
  EXPECT_EQ(Ruleplane("plan examples/snapshots/quorum-lost.json -o xml").exit_code, 2);
  EXPECT_EQ(Ruleplane("frobnicate").exit_code, 2);
  EXPECT_EQ(Ruleplane("plan examples/snapshots/quorum-lost.json --param nosuchparam=1").exit_code, 2);
}

TEST(Cli, PlanHelpDocumentsThePlanFormat) {
  CommandResult run = Ruleplane("plan --help");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_TRUE(Contains(run.out, "idempotencyKey")) << run.out;
  EXPECT_TRUE(Contains(run.out, "dependsOn")) << run.out;
}

TEST(Cli, ExplainShowsFactsAndCellsForOneRule) {
  CommandResult run = Ruleplane("explain examples/snapshots/quorum-lost.json");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(Contains(run.out, "facts:")) << run.out;
  EXPECT_TRUE(Contains(run.out, "SELECTED")) << run.out;
  EXPECT_TRUE(Contains(run.out, "FAIL ")) << run.out;
  CommandResult missing = Ruleplane("explain examples/snapshots/quorum-lost.json --rule no-such-rule");
  EXPECT_EQ(missing.exit_code, 2);
}

TEST(Cli, LintAndTestOfBundledRulesAreClean) {
  CommandResult lint = Ruleplane("lint rules");
  EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err;
  EXPECT_TRUE(Contains(lint.out, "0 errors")) << lint.out;
  CommandResult test = Ruleplane("test rules");
  EXPECT_EQ(test.exit_code, 0) << test.out << test.err;
  EXPECT_TRUE(Contains(test.out, " passed, 0 failed")) << test.out;
}

TEST(Cli, LintReportsErrorsWithPositionAndExits1) {
  const std::string path =
      WriteTemp("broken.yaml",
                "apiVersion: ruleplane.dev/v1\nkind: DecisionTable\nmetadata:\n  name: x\n"
                "  version: 1.0.0\nspec:\n  subject: EtcdCluster\n  hitPolicy: SOMETIMES\n");
  CommandResult run = Ruleplane("lint " + path);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_TRUE(Contains(run.out, path + ":8:14: error:")) << run.out;
  EXPECT_TRUE(Contains(run.out, "^")) << run.out;
}

TEST(Cli, TestReportsFailuresAndExits1) {
  const std::string path = WriteTemp("failing.yaml", R"(apiVersion: ruleplane.dev/v1
kind: DecisionTable
metadata: {name: failing, version: 1.0.0}
spec:
  subject: EtcdCluster
  hitPolicy: FIRST
  facts:
    - name: n
      expr: snapshot.etcd.spec.replicas
  rules:
    - id: three
      when: {n: 3}
  tests:
    - name: passes
      snapshot: {apiVersion: ruleplane.dev/v1, kind: EtcdClusterSnapshot, observedAt: "2024-05-01T10:00:00Z", etcd: {spec: {replicas: 3}}}
      expect: {rules: [three]}
    - name: fails
      snapshot: {apiVersion: ruleplane.dev/v1, kind: EtcdClusterSnapshot, observedAt: "2024-05-01T10:00:00Z", etcd: {spec: {replicas: 5}}}
      expect: {rules: [three]}
)");
  CommandResult run = Ruleplane("test " + path);
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_TRUE(Contains(run.out, "PASS failing@1.0.0: passes")) << run.out;
  EXPECT_TRUE(Contains(run.out, "FAIL failing@1.0.0: fails")) << run.out;
  EXPECT_TRUE(Contains(run.out, "1 passed, 1 failed")) << run.out;
}

TEST(Cli, FactThatCannotBeDerivedNamesFactFileAndField) {
  const std::string path = WriteTemp("no-replicas.json", R"({"apiVersion": "ruleplane.dev/v1",
    "kind": "EtcdClusterSnapshot", "observedAt": "2024-05-01T10:00:00Z",
    "etcd": {"metadata": {"name": "etcd-main"}, "spec": {}, "status": {"members": []}},
    "statefulSet": {}, "leases": [], "pods": []})");
  CommandResult run = Ruleplane("plan " + path);
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_TRUE(Contains(run.out, "ERROR: ")) << run.out;
  EXPECT_TRUE(Contains(run.err, "fact '")) << run.err;
  EXPECT_TRUE(Contains(run.err, "replicas")) << run.err;
  EXPECT_TRUE(Contains(run.err, "status.yaml")) << run.err;
}

TEST(Cli, EvalPrintsJsonOrTheError) {
  const std::string input =
      WriteTemp("input.json", R"({"members": [{"status": "Ready"}, {"status": "NotReady"}]})");
  CommandResult ok = Ruleplane("eval 'members.filter(m, m.status == \"Ready\").size()' --input " + input);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.out, "1\n");
  CommandResult bad = Ruleplane("eval '1 / 0'");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_TRUE(Contains(bad.err, "division by zero")) << bad.err;
}

TEST(Cli, DoubleDashEndsTheOptionsOfEveryCommand) {
  CommandResult eval = Ruleplane("eval -- '-1 + 2'");
  EXPECT_EQ(eval.exit_code, 0) << eval.err;
  EXPECT_EQ(eval.out, "1\n");
  eval = Ruleplane("eval '-1 + 2'");
  EXPECT_EQ(eval.exit_code, 0) << eval.err;
  EXPECT_EQ(eval.out, "1\n");

  // A file whose name starts with '-' is read after --, and only then. The
  // rule file's tests find their snapshots at ../../examples.
  const std::filesystem::path root = TempPath("dash");
  const std::filesystem::path dir = root / "rules" / "etcd-druid";
  std::filesystem::create_directories(dir);
  const std::string source = RULEPLANE_SOURCE_DIR;
  if (!std::filesystem::exists(root / "examples"))
    std::filesystem::create_directory_symlink(source + "/examples", root / "examples");
  std::filesystem::copy_file(source + "/examples/snapshots/quorum-lost.json", dir / "-quorum-lost.json",
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(source + "/rules/etcd-druid/status.yaml", dir / "-status.yaml",
                             std::filesystem::copy_options::overwrite_existing);
  // verify and diff of the status table take minutes under the sanitizers; a small table will do.
  std::filesystem::copy_file(source + "/rules/etcd-druid/backup-alert.yaml", dir / "-small.yaml",
                             std::filesystem::copy_options::overwrite_existing);
  const std::string in_dir = "cd " + dir.string() + " && " + RULEPLANE_BINARY;
  const auto run = [&](const std::string& args) {
    return std::system((in_dir + " " + args + " >/dev/null 2>&1").c_str()) == 0 ? 0 : 1;
  };
  EXPECT_EQ(run("plan -- -quorum-lost.json"), 0);
  EXPECT_EQ(run("plan -quorum-lost.json"), 1);
  EXPECT_EQ(run("plan -o json -- -quorum-lost.json"), 0);
  EXPECT_EQ(run("explain -- -quorum-lost.json"), 0);
  EXPECT_EQ(run("lint -- -status.yaml"), 0);
  EXPECT_EQ(run("lint -status.yaml"), 1);
  EXPECT_EQ(run("test -- -status.yaml"), 0);
  EXPECT_EQ(run("verify -- -small.yaml"), 0);
  EXPECT_EQ(run("diff -- -small.yaml -small.yaml"), 0);
  EXPECT_EQ(run("plan --batch - -- extra.json"), 1);
}

TEST(Cli, VersionPrintsTheVersion) {
  CommandResult run = Ruleplane("version");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_TRUE(Contains(run.out, "ruleplane ")) << run.out;
}

}  // namespace
