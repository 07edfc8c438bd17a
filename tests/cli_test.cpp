// The ruleplane command, run as a user runs it: arguments in, exit code and
// output out.
#include <sys/wait.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/run_ruleplane.h"
#include "tests/support/source_paths.h"

namespace {

using namespace ruleplane::testing_support;

TEST(Cli, PlanOfBundledExampleShowsSteps) {
  CommandResult run = Ruleplane("plan examples/snapshots/quorum-lost.json");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(Contains(run.out, "etcd-druid-status@")) << run.out;
  EXPECT_TRUE(Contains(run.out, "ACTION")) << run.out;
}

TEST(Cli, PlanWorksFromAnyDirectoryWithBundledRules) {
  const std::string snapshot =
      std::string(ruleplane::testing::SourceDir()) + "/examples/snapshots/pink-of-health.json";
  const std::string out = TempPath("out");
  const std::string command = std::string("cd / && ") + ruleplane::testing::RuleplaneBinary() +
                              " plan -o json " + snapshot + " >" + out + " 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << Slurp(out);
  EXPECT_TRUE(Contains(Slurp(out), "\"kind\": \"Plan\""));
}

TEST(Cli, PlanReadsStandardInputAndPrintsJsonAndYaml) {
  CommandResult json = Ruleplane("plan - -o json", std::string(ruleplane::testing::SourceDir()) +
                                                       "/examples/snapshots/quorum-lost.json");
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

// Every command that `ruleplane --help` lists (and the subcommands that have
// their own usage) prints its usage on -h and --help, on standard output, and
// exits 0, as kubectl does; apply, controller, member-init, member-agent and
// history called --help an unknown flag, and several others exited 2.
TEST(Cli, EveryCommandPrintsItsUsageOnHelpAndExits0) {
  CommandResult overview = Ruleplane("--help");
  ASSERT_EQ(overview.exit_code, 0);
  std::set<std::string> commands;
  std::istringstream lines(overview.out);
  for (std::string line; std::getline(lines, line);) {
    // "  plan [--rules ...": two spaces, then a command name.
    if (line.size() > 2 && line.starts_with("  ") && std::islower(static_cast<unsigned char>(line[2]))) {
      std::istringstream words(line);
      std::string command, second;
      words >> command >> second;
      // "backup full|delta": the first of the alternatives.
      if (command == "observe" || command == "backup") command += " " + second.substr(0, second.find('|'));
      commands.insert(command);
    }
  }
  ASSERT_GE(commands.size(), 15u) << overview.out;
  for (const std::string& command : commands) {
    if (command == "version") continue;
    for (const char* flag : {"-h", "--help"}) {
      CommandResult run = Ruleplane(command + " " + flag);
      EXPECT_EQ(run.exit_code, 0) << command << " " << flag << ": " << run.err;
      EXPECT_TRUE(Contains(run.out, "usage: ruleplane " + command.substr(0, command.find(' '))))
          << command << " " << flag << ": " << run.out;
      EXPECT_EQ(run.err, "") << command << " " << flag;
    }
  }
  CommandResult batch = Ruleplane("plan --batch x.jsonl -h");
  EXPECT_EQ(batch.exit_code, 0);
  EXPECT_TRUE(Contains(batch.out, "one JSON snapshot per input line")) << batch.out;
  CommandResult positional = Ruleplane("lint -- --help");
  EXPECT_EQ(positional.exit_code, 2) << "after --, --help is a path";
}

// The README's "Using it" commands, run as written from the repository root:
// each names files that exist and exits as the README says.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kUnderSanitizers = true;
#else
constexpr bool kUnderSanitizers = false;
#endif

TEST(Cli, TheReadmesExampleCommandsRun) {
  const std::string readme = Slurp(std::string(ruleplane::testing::SourceDir()) + "/README.md");
  const size_t section = readme.find("## Using it");
  ASSERT_NE(section, std::string::npos);
  const size_t block = readme.find("```sh\n", section);
  const size_t end = readme.find("```\n", block + 6);
  ASSERT_NE(end, std::string::npos);
  std::istringstream lines(readme.substr(block + 6, end - block - 6));
  int listed_commands = 0, run_commands = 0;
  for (std::string line; std::getline(lines, line);) {
    const std::string prefix = "build/release/ruleplane ";
    if (!line.starts_with(prefix)) continue;
    std::string command = line.substr(prefix.size());
    if (const size_t comment = command.find("  #"); comment != std::string::npos) command.resize(comment);
    ++listed_commands;
    // rules_verify runs `verify rules`; the optimised run runs the README's
    // diff of the whole tables, which takes minutes under the sanitizers (their
    // diff tests take small tables).
    if (command.starts_with("verify ") || (kUnderSanitizers && command.starts_with("diff "))) continue;
    CommandResult run = Ruleplane(command);
    // diff exits 1 when the versions decide differently, as diff(1) does.
    EXPECT_EQ(run.exit_code, command.starts_with("diff ") ? 1 : 0) << command << "\n" << run.err;
    EXPECT_FALSE(Contains(run.err, "cannot read")) << command << "\n" << run.err;
    if (command.starts_with("eval ")) {
      EXPECT_EQ(run.out, "2\n") << "examples/members.json has two Ready members";
    }
    ++run_commands;
  }
  EXPECT_GE(listed_commands, 9) << "the README's examples were not found";
  EXPECT_GE(run_commands, listed_commands - 2);
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
  const std::string source = ruleplane::testing::SourceDir();
  if (!std::filesystem::exists(root / "examples"))
    std::filesystem::create_directory_symlink(source + "/examples", root / "examples");
  std::filesystem::copy_file(source + "/examples/snapshots/quorum-lost.json", dir / "-quorum-lost.json",
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(source + "/rules/etcd-druid/status.yaml", dir / "-status.yaml",
                             std::filesystem::copy_options::overwrite_existing);
  // verify and diff of the status table take minutes under the sanitizers; a small table will do.
  std::filesystem::copy_file(source + "/rules/etcd-druid/backup-alert.yaml", dir / "-small.yaml",
                             std::filesystem::copy_options::overwrite_existing);
  const std::string in_dir = "cd " + dir.string() + " && " + ruleplane::testing::RuleplaneBinary();
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
