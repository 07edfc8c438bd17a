#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace ruleplane::cli {
namespace {

struct Outcome {
  int exit_code;
  std::string out;
  std::string err;
};

Outcome Eval(const Args& args, const std::string& input = "") {
  std::istringstream in(input);
  std::ostringstream out, err;
  const int exit_code = RunEval(args, in, out, err);
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

TEST(EvalCommandTest, BatchEvaluatesOneCasePerLineAndGoesOnPastAFailure) {
  const Outcome outcome = Eval({"--batch"},
                               "{\"expr\": \"x * 2\", \"input\": {\"x\": 21}}\n"
                               "\n"
                               "{\"expr\": \"1 / 0\"}\n"
                               "{\"expr\": \"[1, 2].map(x, x * 10)\"}\n"
                               "{\"expr\": \"1 +\"}\n"
                               "not json\n"
                               "{\"input\": {}}\n"
                               "{\"expr\": \"x\", \"input\": [1]}");
  EXPECT_EQ(outcome.exit_code, kExitFinding);
  std::istringstream lines(outcome.out);
  std::vector<std::string> line;
  for (std::string text; std::getline(lines, text);) line.push_back(text);
  ASSERT_EQ(line.size(), 7u) << outcome.out;
  EXPECT_EQ(line[0], R"({"line":1,"value":42})");
  EXPECT_EQ(line[1].substr(0, 19), R"({"line":3,"error":")") << line[1];
  EXPECT_NE(line[1].find("division by zero"), std::string::npos) << line[1];
  EXPECT_EQ(line[2], R"({"line":4,"value":[10,20]})");
  EXPECT_EQ(line[3].substr(0, 28), R"({"line":5,"error":"column 4:)") << line[3];
  EXPECT_EQ(line[4].substr(0, 19), R"({"line":6,"error":")") << line[4];
  EXPECT_NE(line[5].find(R"(under \"expr\")"), std::string::npos) << line[5];
  EXPECT_NE(line[6].find(R"(\"input\" to be a JSON object)"), std::string::npos) << line[6];
  EXPECT_EQ(outcome.err, "ruleplane: 5 of 7 cases failed\n");
  // Each case's value is what the same expression gives alone.
  const Outcome alone = Eval({"1 / 0"});
  EXPECT_EQ(alone.exit_code, kExitFinding);
  EXPECT_NE(alone.err.find("division by zero"), std::string::npos) << alone.err;
}

TEST(EvalCommandTest, BatchTakesNoExpressionArgumentAndNoInputFile) {
  EXPECT_EQ(Eval({"--batch", "1 + 1"}).exit_code, kExitUsage);
  const Outcome with_input = Eval({"--batch", "--input", "x.json"});
  EXPECT_EQ(with_input.exit_code, kExitUsage);
  EXPECT_NE(with_input.err.find("not from --input"), std::string::npos) << with_input.err;
  const Outcome all_passed = Eval({"--batch"}, "{\"expr\": \"true\"}\n");
  EXPECT_EQ(all_passed.exit_code, kExitOk);
  EXPECT_EQ(all_passed.out, "{\"line\":1,\"value\":true}\n");
}

}  // namespace
}  // namespace ruleplane::cli
