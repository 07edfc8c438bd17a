#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "cli/commands.h"

namespace ruleplane::cli {
namespace {

struct Outcome {
  int exit_code;
  std::string out;
  std::string err;
};

Outcome Eval(const Args& args) {
  std::ostringstream out, err;
  const int exit_code = RunEval(args, out, err);
  return {exit_code, out.str(), err.str()};
}

std::string WriteTempFile(const std::string& name, const std::string& content) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << content;
  return path;
}

TEST(EvalCommandTest, PrintsTheResultAsJson) {
  const Outcome outcome = Eval({"[1, 2].map(x, x * 10)"});
  EXPECT_EQ(outcome.exit_code, kExitOk);
  EXPECT_EQ(outcome.out, "[\n  10,\n  20\n]\n");
  EXPECT_EQ(outcome.err, "");
  EXPECT_EQ(Eval({"duration('5m')"}).out, "\"300s\"\n");
  EXPECT_EQ(Eval({"timestamp('2024-05-01T12:00:00+02:00')"}).out, "\"2024-05-01T10:00:00Z\"\n");
}

TEST(EvalCommandTest, TopLevelKeysOfTheInputBecomeVariables) {
  const std::string input = WriteTempFile(
      "eval_input.json",
      R"({"n": 3, "members": [{"status": "Ready"}, {"status": "NotReady"}, {"status": "Ready"}]})");
  Outcome outcome = Eval({"2 * members.filter(m, m.status == 'Ready').size() > n", "--input", input});
  EXPECT_EQ(outcome.exit_code, kExitOk) << outcome.err;
  EXPECT_EQ(outcome.out, "true\n");
  outcome = Eval({"--input=" + input, "n"});
  EXPECT_EQ(outcome.out, "3\n");
}

TEST(EvalCommandTest, ParseAndCheckErrorsShowTheColumnAndACaret) {
  Outcome outcome = Eval({"(1 + 2"});
  EXPECT_EQ(outcome.exit_code, kExitFinding);
  EXPECT_EQ(outcome.out, "");
  EXPECT_EQ(outcome.err, "error: column 7: expected ')' but found end of input\n  (1 + 2\n        ^\n");
  outcome = Eval({"1 +\n missing"});
  EXPECT_EQ(outcome.exit_code, kExitFinding);
  EXPECT_EQ(outcome.err, "error: line 2, column 2: undeclared reference to 'missing'\n   missing\n   ^\n");
}

TEST(EvalCommandTest, EvaluationErrorsExitOne) {
  const Outcome outcome = Eval({"1 / 0"});
  EXPECT_EQ(outcome.exit_code, kExitFinding);
  EXPECT_EQ(outcome.err, "error: division by zero\n");
}

TEST(EvalCommandTest, BadInputExitsTwo) {
  Outcome outcome = Eval({"x", "--input", ::testing::TempDir() + "does_not_exist.json"});
  EXPECT_EQ(outcome.exit_code, kExitUsage);
  EXPECT_NE(outcome.err.find("cannot read"), std::string::npos) << outcome.err;

  outcome = Eval({"x", "--input", WriteTempFile("eval_bad.json", "{\"x\": [1,}")});
  EXPECT_EQ(outcome.exit_code, kExitUsage);
  EXPECT_NE(outcome.err.find("invalid JSON at line 1, column 10 (byte 10)"), std::string::npos)
      << outcome.err;

  outcome = Eval({"x", "--input", WriteTempFile("eval_list.json", "[1]")});
  EXPECT_EQ(outcome.exit_code, kExitUsage);
  EXPECT_NE(outcome.err.find("expected a JSON object"), std::string::npos) << outcome.err;
}

TEST(EvalCommandTest, BadUsageExitsTwo) {
  EXPECT_EQ(Eval({}).exit_code, kExitUsage);
  EXPECT_EQ(Eval({"1", "2"}).exit_code, kExitUsage);
  EXPECT_EQ(Eval({"1", "--input"}).exit_code, kExitUsage);
  EXPECT_EQ(Eval({"--frobnicate", "1"}).exit_code, kExitUsage);
  const Outcome help = Eval({"--help"});
  EXPECT_EQ(help.exit_code, kExitOk);
  EXPECT_NE(help.out.find("usage: ruleplane eval"), std::string::npos);
}

}  // namespace
}  // namespace ruleplane::cli
