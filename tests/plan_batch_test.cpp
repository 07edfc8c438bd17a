// ruleplane plan --batch, run as a user runs it: one snapshot per input line,
// one JSON decision per output line.
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/line_reader.h"
#include "tests/run_ruleplane.h"
#include "tests/support/source_paths.h"

namespace {

using namespace ruleplane::testing_support;

// An example snapshot as one compact line.
std::string ExampleLine(const std::string& name) {
  return nlohmann::json::parse(
             Slurp(std::string(ruleplane::testing::SourceDir()) + "/examples/snapshots/" + name))
      .dump();
}

std::vector<nlohmann::json> OutputLines(const std::string& out) {
  std::vector<nlohmann::json> lines;
  std::istringstream stream(out);
  for (std::string line; std::getline(stream, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

constexpr const char* kFlatHealthy =
    R"({"apiVersion":"ruleplane.dev/v1","kind":"StatusBenchSnapshot","observedAt":"2024-05-01T10:00:00Z",)"
    R"("replicas":3,"clusterSize":3,"stsReplicas":3,"stsReadyReplicas":3,"members":3,"ready":3,"notReady":0,)"
    R"("unknown":0,"readyCondition":true,"allMembersReady":true,"backupReady":true,"pdbMinAvailable":2})";
constexpr const char* kFlatQuorumLost =
    R"({"apiVersion":"ruleplane.dev/v1","kind":"StatusBenchSnapshot","observedAt":"2024-05-01T10:00:00Z",)"
    R"("replicas":3,"clusterSize":3,"stsReplicas":3,"stsReadyReplicas":1,"members":3,"ready":1,"notReady":2,)"
    R"("unknown":0,"readyCondition":false,"allMembersReady":false,"backupReady":true,"pdbMinAvailable":2})";

TEST(PlanBatch, EachLineGetsThePlanThatPlanGivesForThatSnapshot) {
  const std::vector<std::string> examples = {"quorum-lost.json", "pink-of-health.json",
                                             "minority-not-ready.json", "member-init-first-bootstrap.json"};
  std::string batch;
  for (const std::string& example : examples) batch += ExampleLine(example) + "\n";
  CommandResult run = Ruleplane("plan --batch " + WriteTemp("examples.jsonl", batch));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto lines = OutputLines(run.out);
  ASSERT_EQ(lines.size(), examples.size()) << run.out;
  for (size_t i = 0; i < examples.size(); ++i) {
    CommandResult single = Ruleplane("plan -o json examples/snapshots/" + examples[i]);
    ASSERT_EQ(single.exit_code, 0) << single.err;
    const auto plan = nlohmann::json::parse(single.out);
    EXPECT_EQ(lines[i]["line"], i + 1);
    ASSERT_EQ(lines[i]["ruleSets"].size(), plan["ruleSets"].size()) << examples[i];
    for (size_t r = 0; r < plan["ruleSets"].size(); ++r) {
      EXPECT_EQ(lines[i]["ruleSets"][r]["name"], plan["ruleSets"][r]["name"]);
      EXPECT_EQ(lines[i]["ruleSets"][r]["matchedRules"], plan["ruleSets"][r]["matchedRules"]) << examples[i];
    }
    EXPECT_EQ(lines[i]["steps"], plan["steps"]) << examples[i];
  }
  EXPECT_FALSE(lines[0]["steps"].empty()) << "quorum-lost.json should plan steps";
}

TEST(PlanBatch, ABadLineIsReportedOnItsLineAndTheBatchGoesOn) {
  const std::string batch =
      ExampleLine("pink-of-health.json") + "\n{\"apiVersion\": \n" +
      R"({"apiVersion":"ruleplane.dev/v1","kind":"NoSuchSnapshot","observedAt":"2024-05-01T10:00:00Z"})" +
      "\n" + ExampleLine("quorum-lost.json") + "\n";
  CommandResult run = Ruleplane("plan --batch " + WriteTemp("bad.jsonl", batch));
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_TRUE(Contains(run.err, "2 of 4")) << run.err;
  const auto lines = OutputLines(run.out);
  ASSERT_EQ(lines.size(), 4u) << run.out;
  EXPECT_TRUE(lines[0].contains("ruleSets"));
  EXPECT_EQ(lines[1]["line"], 2);
  EXPECT_TRUE(Contains(lines[1]["error"].get<std::string>(), "byte")) << lines[1];
  EXPECT_TRUE(Contains(lines[2]["error"].get<std::string>(), "subject 'NoSuch'")) << lines[2];
  EXPECT_EQ(lines[3]["line"], 4);
  EXPECT_FALSE(lines[3].contains("error")) << lines[3];
  EXPECT_FALSE(lines[3]["steps"].empty()) << lines[3];
}

TEST(PlanBatch, ReadsStandardInputSkipsBlankLinesAndKeepsLineNumbers) {
  const std::string rules = "--rules bench/compare/tables/status-first.yaml";
  const std::string input = WriteTemp("flat.jsonl", std::string(kFlatHealthy) + "\n\n" + kFlatQuorumLost +
                                                        "\r\n" + kFlatHealthy);  // no final newline
  CommandResult run = Ruleplane("plan " + rules + " --batch -", input);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto lines = OutputLines(run.out);
  ASSERT_EQ(lines.size(), 3u) << run.out;
  EXPECT_EQ(lines[0]["line"], 1);
  EXPECT_EQ(lines[1]["line"], 3);
  EXPECT_EQ(lines[2]["line"], 4);
  EXPECT_EQ(lines[0]["ruleSets"][0]["matchedRules"], nlohmann::json::array({"in-sync"}));
  EXPECT_EQ(lines[1]["ruleSets"][0]["matchedRules"], nlohmann::json::array({"quorum-lost"}));
  EXPECT_EQ(lines[1]["ruleSets"][0]["name"], "compare-status-first");
  EXPECT_EQ(lines[1]["steps"], nlohmann::json::array());
}

TEST(PlanBatch, AHitPolicyViolationIsAFindingOfItsLine) {
  const std::string rules = WriteTemp("unique.yaml", R"(apiVersion: ruleplane.dev/v1
kind: DecisionTable
metadata: {name: unique-batch, version: 1.0.0}
spec:
  subject: StatusBench
  hitPolicy: UNIQUE
  facts:
    - {name: ready, expr: snapshot.ready}
  rules:
    - {id: some-ready, when: {ready: "> 0"}}
    - {id: three-ready, when: {ready: 3}}
)");
  CommandResult run =
      Ruleplane("plan --rules " + rules + " --batch " +
                WriteTemp("violation.jsonl", std::string(kFlatQuorumLost) + "\n" + kFlatHealthy + "\n"));
  EXPECT_EQ(run.exit_code, 1);
  const auto lines = OutputLines(run.out);
  ASSERT_EQ(lines.size(), 2u) << run.out;
  EXPECT_EQ(lines[0]["ruleSets"][0]["matchedRules"], nlohmann::json::array({"some-ready"}));
  EXPECT_FALSE(lines[0]["ruleSets"][0].contains("violation"));
  EXPECT_TRUE(lines[1]["ruleSets"][0].contains("violation")) << lines[1];
  EXPECT_FALSE(lines[1]["ruleSets"][0].contains("matchedRules"));
}

TEST(PlanBatch, ParamOverridesApplyToEveryLine) {
  // minority-not-ready.json has a member NotReady for a while; a long enough
  // grace period means it is not evicted yet.
  const std::string batch = WriteTemp("grace.jsonl", ExampleLine("minority-not-ready.json") + "\n");
  CommandResult as_is = Ruleplane("plan --batch " + batch);
  CommandResult patient = Ruleplane("plan --param notReadyGracePeriod=1000h --batch " + batch);
  ASSERT_EQ(as_is.exit_code, 0) << as_is.err;
  ASSERT_EQ(patient.exit_code, 0) << patient.err;
  EXPECT_NE(OutputLines(as_is.out)[0]["ruleSets"], OutputLines(patient.out)[0]["ruleSets"]);
  CommandResult unknown = Ruleplane("plan --param noSuchParam=1 --batch " + batch);
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_TRUE(Contains(unknown.err, "noSuchParam")) << unknown.err;
  CommandResult not_a_duration = Ruleplane("plan --param notReadyGracePeriod=soon --batch " + batch);
  EXPECT_EQ(not_a_duration.exit_code, 2);
  EXPECT_TRUE(Contains(not_a_duration.err, "notReadyGracePeriod")) << not_a_duration.err;
  EXPECT_EQ(not_a_duration.out, "");
}

TEST(PlanBatch, BadUsageAndUnreadableInputExit2) {
  CommandResult no_file = Ruleplane("plan --batch");
  EXPECT_EQ(no_file.exit_code, 2);
  EXPECT_TRUE(Contains(no_file.err, "--batch")) << no_file.err;
  CommandResult extra = Ruleplane("plan --batch a.jsonl examples/snapshots/quorum-lost.json");
  EXPECT_EQ(extra.exit_code, 2);
  CommandResult yaml = Ruleplane("plan --batch a.jsonl -o yaml");
  EXPECT_EQ(yaml.exit_code, 2);
  EXPECT_TRUE(Contains(yaml.err, "-o must be json")) << yaml.err;
  CommandResult missing = Ruleplane("plan --batch /nonexistent.jsonl");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_TRUE(Contains(missing.err, "/nonexistent.jsonl")) << missing.err;
  CommandResult help = Ruleplane("plan --batch --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(Contains(help.out, "one JSON snapshot per input line")) << help.out;
}

TEST(PlanBatch, ANamedInputMustBeARegularFileSoThatADeviceCannotRunForEver) {
  CommandResult zero = Ruleplane("plan --batch /dev/zero");
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_TRUE(Contains(zero.err, "/dev/zero: a character device, not a regular file")) << zero.err;
  EXPECT_TRUE(Contains(zero.err, "--batch -")) << zero.err;
  EXPECT_EQ(zero.out, "");
}

// The batch's line reader holds at most one line of the bound, whatever the
// input; `plan --batch` gives it 256 MiB, the bound of one snapshot file.
std::vector<std::string> ReadAll(const std::string& input, size_t bound, std::vector<int>* too_long) {
  std::istringstream in(input);
  ruleplane::cli::LineReader reader(in, bound);
  std::vector<std::string> lines;
  std::string line;
  for (ruleplane::cli::LineReader::Read read;
       (read = reader.Next(line)) != ruleplane::cli::LineReader::Read::kEnd;) {
    if (read == ruleplane::cli::LineReader::Read::kTooLong)
      too_long->push_back(static_cast<int>(lines.size()));
    lines.push_back(line);
  }
  return lines;
}

TEST(PlanBatchLineReader, ALineOverTheBoundIsSkippedToItsNewlineAndReportedAndTheNextLinesAreRead) {
  std::vector<int> too_long;
  const auto lines = ReadAll("abc\n" + std::string(100, 'x') + "\nde\n\nfgh", 8, &too_long);
  EXPECT_EQ(lines, (std::vector<std::string>{"abc", "", "de", "", "fgh"}));
  EXPECT_EQ(too_long, std::vector<int>{1});

  too_long.clear();
  EXPECT_EQ(ReadAll("12345678\n123456789", 8, &too_long), (std::vector<std::string>{"12345678", ""}));
  EXPECT_EQ(too_long, std::vector<int>{1}) << "a last line without a newline is bounded too";
}

TEST(PlanBatchLineReader, AnEndlessLineThatCrossesManyBlocksIsBoundedByItsBoundNotByItsLength) {
  // 3 MiB without a newline crosses several of the reader's 1 MiB blocks.
  std::vector<int> too_long;
  const auto lines = ReadAll(std::string(3 << 20, '{') + "\n{}\n", 1 << 20, &too_long);
  EXPECT_EQ(lines, (std::vector<std::string>{"", "{}"}));
  EXPECT_EQ(too_long, std::vector<int>{0});
  too_long.clear();
  EXPECT_EQ(ReadAll(std::string(3 << 20, 'a'), 4 << 20, &too_long).at(0).size(), size_t{3} << 20);
  EXPECT_TRUE(too_long.empty());
}

TEST(PlanBatch, TheComparisonTablesPassTheirOwnTests) {
  CommandResult run = Ruleplane("test bench/compare/tables");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_TRUE(Contains(run.out, "6 passed")) << run.out;
}

}  // namespace
