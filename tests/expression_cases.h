// A fixture for tables of expression cases: variables bound from a JSON
// document, each case's text evaluated and its result (or error) compared.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "engine/common/json_value.h"
#include "engine/expr/budget.h"
#include "engine/expr/expression.h"

namespace ruleplane::expr {

struct Case {
  const char* text;
  const char* expected;  // the result's DebugString, or "error: <substring of the message>"
};

class ExpressionCaseTest : public ::testing::Test {
 protected:
  // Binds every top-level key of `variables_json` to a slot.
  explicit ExpressionCaseTest(const char* variables_json) {
    Result<Value> variables = ParseJson(variables_json);
    EXPECT_TRUE(variables.ok());
    for (const auto& [name, value] : variables->map_value()) Declare(name.string_value(), value);
  }

  void Declare(const std::string& name, Value value) {
    env_.Declare(name, static_cast<int>(frame_.size()));
    frame_.push_back(std::move(value));
  }

  // The result of evaluating `text`, or a description of the parse/check
  // error; the work of folding and of evaluating counts against `budget`.
  Value Eval(const std::string& text, const Limits& limits = {}, Budget* budget = nullptr) {
    auto program = Compile(text, env_, limits, budget);
    if (!program.ok()) return Value::Error("compile error: " + program.error().message);
    Frame frame = frame_;
    frame.resize((*program)->frame_size());
    return (*program)->Evaluate(frame, budget);
  }

  // `errors_at_evaluation`: an expected error must not come from Parse or Check.
  void ExpectCases(const std::vector<Case>& cases, bool errors_at_evaluation = false) {
    for (const Case& c : cases) {
      const Value result = Eval(c.text);
      const std::string expected = c.expected;
      if (expected.starts_with("error: ")) {
        ASSERT_TRUE(result.is_error()) << c.text << " gave " << result.DebugString();
        EXPECT_NE(result.error_message().find(expected.substr(7)), std::string::npos)
            << c.text << " gave the error: " << result.error_message();
        if (errors_at_evaluation) {
          EXPECT_EQ(result.error_message().find("compile error"), std::string::npos)
              << c.text << " should fail at evaluation, not at Check: " << result.error_message();
        }
      } else {
        EXPECT_EQ(result.DebugString(), expected) << c.text;
      }
    }
  }

  Environment env_;
  Frame frame_;
};

}  // namespace ruleplane::expr
