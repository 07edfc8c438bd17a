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

TEST(EvalCommandTest, DoubleDashEndsTheOptions) {
  const std::string input = WriteTempFile("eval_dash_input.json", R"({"x": 5})");
  EXPECT_EQ(Eval({"--", "-1 + 2"}).out, "1\n");
  EXPECT_EQ(Eval({"--input", input, "--", "-x"}).out, "-5\n");
  EXPECT_NE(Eval({"--", "--input"}).err.find("undeclared reference to 'input'"), std::string::npos);
  const Outcome two = Eval({"--", "1", "2"});
  EXPECT_EQ(two.exit_code, kExitUsage);
  EXPECT_NE(two.err.find("unexpected argument '2'"), std::string::npos) << two.err;
}

TEST(EvalCommandTest, AnExpressionThatStartsWithAMinusNeedsNoDoubleDash) {
  // Only --name and -x look like options; "-1 + 2" and "-a.b" are expressions.
  EXPECT_EQ(Eval({"-1 + 2"}).out, "1\n");
  EXPECT_EQ(Eval({"-1"}).out, "-1\n");
  EXPECT_EQ(Eval({"-2.5"}).out, "-2.5\n");
  const std::string input = WriteTempFile("eval_minus_input.json", R"({"a": {"b": 2}})");
  EXPECT_EQ(Eval({"-a.b", "--input", input}).out, "-2\n");
  const Outcome option = Eval({"-x"});
  EXPECT_EQ(option.exit_code, kExitUsage);
  EXPECT_NE(option.err.find("unknown flag -x (an argument that starts with '-' goes after --)"),
            std::string::npos)
      << option.err;
}

TEST(EvalCommandTest, NonFiniteDoublesPrintAsCelsJsonMapping) {
  EXPECT_EQ(Eval({"1.0 / 0.0"}).out, "\"Infinity\"\n");
  EXPECT_EQ(Eval({"-1.0 / 0.0"}).out, "\"-Infinity\"\n");
  EXPECT_EQ(Eval({"0.0 / 0.0"}).out, "\"NaN\"\n");
  EXPECT_EQ(Eval({"[2.0, 1.0 / 0.0]"}).out, "[\n  2.0,\n  \"Infinity\"\n]\n");
}

TEST(EvalCommandTest, BackquotedFieldNames) {
  EXPECT_EQ(Eval({"{'content-type': 'json'}.`content-type`"}).out, "\"json\"\n");
  EXPECT_EQ(Eval({"has({'a.b': 1}.`a.b`) && !has({'a.b': 1}.`a/c`)"}).out, "true\n");
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
