// Hostile and careless input, run as a user runs the command: every case ends
// with a clear message and exit 1 or 2, never a signal, an uncaught exception
// or a plan that silently ignores what it cannot stand behind.
#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "platform/http_client.h"
#include "platform/process.h"
#include "tests/run_ruleplane.h"
#include "tests/support/source_paths.h"

namespace ruleplane {
namespace {

using nlohmann::json;
using testing_support::CommandResult;
using testing_support::Contains;
using testing_support::Ruleplane;
using testing_support::Slurp;
using testing_support::TempPath;
using testing_support::WriteTemp;

const std::string kSource = testing::SourceDir();

json Example(const std::string& name) { return json::parse(Slurp(kSource + "/examples/snapshots/" + name)); }

std::string WriteJson(const std::string& name, const json& value) { return WriteTemp(name, value.dump()); }

// A temporary directory of the running test's own, empty.
std::string TempDir(const std::string& name) {
  const std::string dir = TempPath(name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(Hardening, SymlinkLoopInARulesDirectoryIsNamed) {
  const std::string dir = TempDir("rules");
  std::filesystem::create_symlink("b.yaml", dir + "/a.yaml");
  std::filesystem::create_symlink("a.yaml", dir + "/b.yaml");
  for (const char* command : {"lint ", "test ", "verify "}) {
    CommandResult run = Ruleplane(command + dir);
    EXPECT_EQ(run.exit_code, 2) << command << run.err;
    EXPECT_TRUE(Contains(run.err, "a loop of symbolic links")) << command << run.err;
    EXPECT_TRUE(Contains(run.err, dir + "/")) << command << run.err;
  }
}

TEST(Hardening, SymlinkLoopInASnapshotsDirectoryIsNamed) {
  const std::string dir = TempDir("snapshots");
  std::filesystem::create_symlink("y.json", dir + "/x.json");
  std::filesystem::create_symlink("x.json", dir + "/y.json");
  CommandResult run = Ruleplane("diff --snapshots " + dir +
                                " rules/etcd-druid/backup-alert.yaml rules/etcd-druid/backup-alert.yaml");
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_TRUE(Contains(run.err, "a loop of symbolic links")) << run.err;
}

TEST(Hardening, ADirectoryWhereAFileIsExpectedSaysSo) {
  const std::string dir = TempDir("input");
  for (const std::string& command :
       {"eval 1 --input " + dir, "plan " + dir, "plan --batch " + dir, "explain " + dir}) {
    CommandResult run = Ruleplane(command);
    EXPECT_EQ(run.exit_code, 2) << command << run.err;
    EXPECT_TRUE(Contains(run.err, "cannot read '" + dir + "': it is a directory, not a file"))
        << command << ": " << run.err;
  }
}

TEST(Hardening, AFullDiskIsAnError) {
  const std::string err = TempPath("err");
  const std::string command = std::string("cd ") + kSource + " && " + testing::RuleplaneBinary() +
                              " plan examples/snapshots/quorum-lost.json >/dev/full 2>" + err;
  const int status = std::system(command.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_TRUE(Contains(Slurp(err), "cannot write the output: No space left on device")) << Slurp(err);
}

TEST(Hardening, AClosedPipeIsAnErrorWhenSigpipeIsIgnored) {
  // More output than a pipe holds, into a reader that has gone: with SIGPIPE
  // ignored every write fails with EPIPE.
  const std::string status = TempPath("status");
  const std::string command = std::string("bash -c 'trap \"\" PIPE; ") + testing::RuleplaneBinary() +
                              " eval \"lists.range(200000)\" | true; echo ${PIPESTATUS[0]} >" + status +
                              "' 2>" + TempPath("err");
  ASSERT_EQ(std::system(command.c_str()), 0);
  EXPECT_EQ(Slurp(status), "2\n");
  EXPECT_TRUE(Contains(Slurp(TempPath("err")), "cannot write the output")) << Slurp(TempPath("err"));
}

TEST(Hardening, TableOutputCannotForgeARow) {
  const std::string rules = WriteTemp("rules.yaml", R"(apiVersion: ruleplane.dev/v1
kind: DecisionTable
metadata: {name: echo, version: 1.0.0}
spec:
  subject: EtcdCluster
  hitPolicy: FIRST
  facts:
    - name: name
      expr: snapshot.etcd.metadata.name
  rules:
    - id: echo
      when: {name: "-"}
      then:
        - action: DeletePod
          target: name
          params: {name: name}
)");
  json snapshot = Example("quorum-lost.json");
  snapshot["etcd"]["metadata"]["name"] = "etcd-main\n99  forged-rule  DeletePod  everything  \x1b[2J";
  CommandResult run = Ruleplane("plan --rules " + rules + " " + WriteJson("forged.json", snapshot));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_FALSE(Contains(run.out, "\n99  forged-rule")) << run.out;
  EXPECT_FALSE(Contains(run.out, "\x1b")) << run.out;
  EXPECT_TRUE(Contains(run.out, "etcd-main\\n99  forged-rule  DeletePod  everything  \\x1b[2J")) << run.out;
}

TEST(Hardening, ReplicasOutsideTheDomainIsAnErrorNotAPlan) {
  for (const int replicas : {12, -1}) {
    for (const std::string rules : {"etcd-druid@1", "etcd-druid@2"}) {
      json snapshot = Example(rules == "etcd-druid@1" ? "pink-of-health.json" : "v2-pink-of-health.json");
      snapshot["etcd"]["spec"]["replicas"] = replicas;
      CommandResult run =
          Ruleplane("plan --rules " + rules + " " + WriteJson("replicas.json", snapshot) + " -o json");
      EXPECT_EQ(run.exit_code, 1) << rules << " " << replicas << ": " << run.err;
      EXPECT_TRUE(Contains(run.err, "fact 'n' (rules/etcd-druid/")) << run.err;
      EXPECT_TRUE(
          Contains(run.err, "is " + std::to_string(replicas) + ", outside its declared domain int [0, 9]"))
          << run.err;
      const json plan = json::parse(run.out);
      for (const json& step : plan["steps"]) {
        EXPECT_NE(step["action"], "ScaleStatefulSet") << rules << " " << replicas << ": " << step.dump();
        EXPECT_NE(step["action"], "RemoveStatusMember") << rules << " " << replicas << ": " << step.dump();
      }
    }
  }
}

TEST(Hardening, OutsideDomainPlanPlansAnyway) {
  const std::string rules = WriteTemp("rules.yaml", R"(apiVersion: ruleplane.dev/v1
kind: DecisionTable
metadata: {name: wide, version: 1.0.0}
spec:
  subject: EtcdCluster
  hitPolicy: FIRST
  facts:
    - name: n
      expr: snapshot.etcd.spec.replicas
      domain: int [0, 7]
      outsideDomain: plan
  rules:
    - id: any
      when: {n: "-"}
      then:
        - action: ScaleStatefulSet
          target: '"etcd-main"'
          params: {replicas: n}
)");
  json snapshot = Example("pink-of-health.json");
  snapshot["etcd"]["spec"]["replicas"] = 12;
  CommandResult run = Ruleplane("plan --rules " + rules + " " + WriteJson("twelve.json", snapshot));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(Contains(run.out, "replicas=12")) << run.out;
}

TEST(Hardening, OneRuleSetsErrorLeavesTheOthersPlanned) {
  // Snapshot leases as etcd-druid creates them, before the first backup: no holder.
  json snapshot = Example("v2-pink-of-health.json");
  for (json& lease : snapshot["leases"]) {
    if (lease["metadata"]["name"].get<std::string>().ends_with("-snap"))
      lease["spec"].erase("holderIdentity");
  }
  CommandResult run =
      Ruleplane("plan --rules etcd-druid@2 " + WriteJson("no-holder.json", snapshot) + " -o json");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const json plan = json::parse(run.out);
  bool status_planned = false, compaction_waits = false;
  for (const json& rule_set : plan["ruleSets"]) {
    EXPECT_FALSE(rule_set.contains("error")) << rule_set.dump();
    if (rule_set["name"] == "etcd-druid-status") status_planned = !rule_set["matchedRules"].empty();
    if (rule_set["name"] == "etcd-druid-compaction") {
      compaction_waits = rule_set["matchedRules"] == json::array({"revisions-not-set"});
    }
  }
  EXPECT_TRUE(status_planned) << run.out;
  EXPECT_TRUE(compaction_waits) << run.out;

  // A holder that is not a revision is an error of the compaction table only.
  for (json& lease : snapshot["leases"]) {
    if (lease["metadata"]["name"] == "etcd-main-delta-snap") lease["spec"]["holderIdentity"] = "not-a-number";
    if (lease["metadata"]["name"] == "etcd-main-full-snap") lease["spec"]["holderIdentity"] = "100";
  }
  run = Ruleplane("plan --rules etcd-druid@2 " + WriteJson("bad-holder.json", snapshot) + " -o json");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_TRUE(Contains(run.err, "rule set etcd-druid-compaction@2.1.0: fact 'revisions'")) << run.err;
  int errors = 0;
  const json bad_holder_plan = json::parse(run.out);
  for (const json& rule_set : bad_holder_plan["ruleSets"]) {
    errors += rule_set.contains("error");
    if (rule_set["name"] == "etcd-druid-status") {
      EXPECT_FALSE(rule_set["matchedRules"].empty());
    }
  }
  EXPECT_EQ(errors, 1) << run.out;
}

TEST(Hardening, TheBudgetStopsARuleSetAndSaysWhichFact) {
  CommandResult run = Ruleplane("plan --budget 50 examples/snapshots/pink-of-health.json");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_TRUE(Contains(run.err, "evaluation budget of 50 exceeded")) << run.err;
  EXPECT_TRUE(Contains(run.err, "fact '")) << run.err;
  EXPECT_EQ(Ruleplane("plan --budget 0 examples/snapshots/pink-of-health.json").exit_code, 2);
  EXPECT_EQ(Ruleplane("plan examples/snapshots/pink-of-health.json").exit_code, 0);
}

TEST(Hardening, NestedMacrosEndQuicklyWithTheBudgetError) {
  CommandResult run = Ruleplane(
      "eval -- 'lists.range(1000).all(a, lists.range(1000).all(b, lists.range(1000).all(c, a + b + c >= "
      "0)))'");
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_TRUE(Contains(run.out + run.err, "evaluation budget of")) << run.out << run.err;
}

TEST(Hardening, RegressionInputsOfTheRuleLoaderEndInAMessage) {
  // Long names and numbers (std::regex overflowed the stack), alias bombs,
  // deep YAML, constant folding that doubles a string: each one a finding or
  // clean, never a signal.
  for (const auto& entry : std::filesystem::directory_iterator(kSource + "/fuzz/corpus/rule_loader")) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("regress_")) continue;
    CommandResult run = Ruleplane("lint " + entry.path().string() + " >/dev/null");
    EXPECT_TRUE(run.exit_code == 0 || run.exit_code == 1)
        << name << " exit " << run.exit_code << ": " << run.err;
  }
}

TEST(Hardening, AliasExpansionIsBoundedPerFile) {
  // Each test snapshot below its own bound, together far beyond one file's.
  std::string text = R"(apiVersion: ruleplane.dev/v1
kind: DecisionTable
metadata: {name: aliases, version: 1.0.0}
spec:
  subject: EtcdCluster
  hitPolicy: FIRST
  facts:
    - name: n
      expr: "1"
  rules:
    - id: any
      when: {n: "-"}
      then: []
  tests:
)";
  text += "    - name: t0\n      snapshot: &a0 {observedAt: \"2024-05-01T10:00:00Z\", x: [";
  for (int i = 0; i < 1000; ++i) text += i ? ", 1" : "1";
  text += "]}\n      expect: {rules: [any]}\n";
  for (int i = 1; i < 2000; ++i) {
    text += "    - name: t" + std::to_string(i) + "\n      snapshot: *a0\n      expect: {rules: [any]}\n";
  }
  CommandResult run = Ruleplane("lint " + WriteTemp("aliases.yaml", text));
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_TRUE(Contains(run.out, "the file's data expands to more than 1000000 values")) << run.out;
}

TEST(Hardening, DeepYamlIsReportedInsideTheFile) {
  for (const char* name : {"regress_deep_yaml_flow.yaml", "regress_deep_yaml_document.yaml"}) {
    const std::string path = kSource + "/fuzz/corpus/rule_loader/" + name;
    const std::string text = Slurp(path);
    const int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
    CommandResult run = Ruleplane("lint " + path);
    EXPECT_EQ(run.exit_code, 1) << run.out;
    const size_t at = run.out.find(".yaml:");
    ASSERT_NE(at, std::string::npos) << run.out;
    EXPECT_LE(std::stoi(run.out.substr(at + 6)), lines) << run.out;
    EXPECT_TRUE(Contains(run.out, "invalid YAML: nested too deeply (500 levels)")) << run.out;
  }
}

// Hazard 12 of issue 23: SIGPIPE must not kill the controller (the leader)
// when a reader goes away: its log's (stdout) or a metrics client's. Here
// its stdout is a pipe that nobody reads from the start, so its first log
// line fails; it must go on serving /healthz, with SIGPIPE ignored (read
// from /proc/<pid>/status). No API server is needed for that: the
// kubeconfig names a closed port.
TEST(Hardening, TheControllerIgnoresSigpipeAndServesWithItsStdoutReaderGone) {
  const std::string dir = TempDir("controller-sigpipe");
  const std::string kubeconfig = dir + "/kubeconfig";
  std::ofstream(kubeconfig)
      << "apiVersion: v1\nkind: Config\n"
         "clusters: [{name: gone, cluster: {server: 'http://127.0.0.1:1'}}]\n"
         "users: [{name: nobody, user: {token: none}}]\n"
         "contexts: [{name: gone, context: {cluster: gone, user: nobody, namespace: default}}]\n"
         "current-context: gone\n";
  const int port = FreeLoopbackPort();
  const std::string address = "127.0.0.1:" + std::to_string(port);
  const std::string journal = dir + "/journal.db", log = dir + "/stderr";
  int pipe_ends[2];
  ASSERT_EQ(pipe2(pipe_ends, O_CLOEXEC), 0);
  close(pipe_ends[0]);  // no reader, ever
  const pid_t controller = fork();
  ASSERT_GE(controller, 0);
  if (controller == 0) {
    dup2(pipe_ends[1], STDOUT_FILENO);
    const int err = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err >= 0) dup2(err, STDERR_FILENO);
    execl(testing::RuleplaneBinary(), testing::RuleplaneBinary(), "controller", "--kubeconfig",
          kubeconfig.c_str(), "--leader-elect", "false", "--journal", journal.c_str(),
          "--metrics-bind-address", address.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(pipe_ends[1]);
  int status = 0;
  bool exited = false;
  auto healthz = [&] {
    HttpClient http;
    auto answer = http.Send("GET", "http://" + address + "/healthz", "", std::chrono::seconds(1));
    return answer.ok() && answer->status == 200;
  };
  bool answered = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!answered && !exited && std::chrono::steady_clock::now() < deadline) {
    answered = healthz();
    exited = waitpid(controller, &status, WNOHANG) == controller;
    if (!answered) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::string ignored_signals;
  std::ifstream process_status("/proc/" + std::to_string(controller) + "/status");
  for (std::string line; std::getline(process_status, line);) {
    if (line.rfind("SigIgn:", 0) == 0) ignored_signals = line.substr(7);
  }
  const bool sigpipe_ignored =
      !ignored_signals.empty() && (std::stoull(ignored_signals, nullptr, 16) >> (SIGPIPE - 1) & 1) != 0;
  const bool still_answers = healthz();
  if (!exited) exited = waitpid(controller, &status, WNOHANG) == controller;
  if (!exited) {
    kill(controller, SIGKILL);
    waitpid(controller, &status, 0);
  }
  EXPECT_TRUE(answered) << Slurp(log);
  EXPECT_FALSE(exited) << (WIFSIGNALED(status) ? "killed by " + std::string(strsignal(WTERMSIG(status)))
                                               : "exit " + std::to_string(WEXITSTATUS(status)))
                       << "\n"
                       << Slurp(log);
  EXPECT_TRUE(sigpipe_ignored) << "SigIgn:" << ignored_signals;
  EXPECT_TRUE(still_answers);
}

}  // namespace
}  // namespace ruleplane
