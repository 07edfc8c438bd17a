// The integer fast path of Program::Evaluate (engine/int_code.h) against the
// tree evaluator, on random expressions and random slot values: both must
// give the same value, or both an error with the same message.
//
// `[e][0]` evaluates `e` with the tree only (a list literal has no int code),
// so comparing `e` with `[e][0]` compares the two paths.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "engine/expr/expression.h"

namespace ruleplane::expr {
namespace {

class Generator {
 public:
  explicit Generator(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  int Pick(int count) { return static_cast<int>(Next() % static_cast<uint64_t>(count)); }

  std::string IntExpression(int depth) {
    if (depth == 0 || Pick(3) == 0) {
      static const char* const kLeaves[] = {"a", "b", "c", "0", "1", "2", "-1", "9223372036854775807", "p"};
      return kLeaves[Pick(9)];
    }
    static const char* const kOperators[] = {" + ", " - ", " * ", " / ", " % "};
    switch (Pick(4)) {
      case 0:
        return "-(" + IntExpression(depth - 1) + ")";
      case 1:
        return "(" + BoolExpression(depth - 1) + " ? " + IntExpression(depth - 1) + " : " +
               IntExpression(depth - 1) + ")";
      default:
        return "(" + IntExpression(depth - 1) + kOperators[Pick(5)] + IntExpression(depth - 1) + ")";
    }
  }

  std::string BoolExpression(int depth) {
    if (depth == 0 || Pick(4) == 0) {
      static const char* const kLeaves[] = {"p", "q", "true", "false", "a"};
      return kLeaves[Pick(5)];
    }
    static const char* const kComparisons[] = {" == ", " != ", " < ", " <= ", " > ", " >= "};
    switch (Pick(5)) {
      case 0:
        return "!(" + BoolExpression(depth - 1) + ")";
      case 1:
        return "(" + BoolExpression(depth - 1) + " && " + BoolExpression(depth - 1) + ")";
      case 2:
        return "(" + BoolExpression(depth - 1) + " || " + BoolExpression(depth - 1) + ")";
      case 3:
        return "(" + BoolExpression(depth - 1) + (Pick(2) ? " == " : " != ") + BoolExpression(depth - 1) +
               ")";
      default:
        return "(" + IntExpression(depth - 1) + kComparisons[Pick(6)] + IntExpression(depth - 1) + ")";
    }
  }

  Value SlotValue() {
    switch (Pick(12)) {
      case 0:
        return Value::Int(std::numeric_limits<int64_t>::min());
      case 1:
        return Value::Int(std::numeric_limits<int64_t>::max());
      case 2:
        return Value::Bool(Pick(2) == 0);
      case 3:
        return Value::Double(1.5);
      case 4:
        return Value::String("x");
      case 5:
        return Value::Null();
      default:
        return Value::Int(Pick(7) - 3);
    }
  }

 private:
  uint64_t state_;
};

TEST(IntCodeTest, AgreesWithTheTreeEvaluator) {
  Environment env;
  const std::vector<std::string> names = {"a", "b", "c", "p", "q"};
  for (size_t slot = 0; slot < names.size(); ++slot) env.Declare(names[slot], static_cast<int>(slot));
  Generator generator(20261121);
  int compared = 0, non_error_results = 0;
  for (int expression = 0; expression < 3000; ++expression) {
    const std::string text = generator.Pick(2) ? generator.IntExpression(4) : generator.BoolExpression(4);
    auto fast = Compile(text, env);
    auto tree = Compile("[" + text + "][0]", env);
    ASSERT_TRUE(fast.ok()) << text << ": " << fast.error().message;
    ASSERT_TRUE(tree.ok()) << text << ": " << tree.error().message;
    for (int round = 0; round < 20; ++round) {
      Frame frame(std::max((*fast)->frame_size(), (*tree)->frame_size()));
      for (size_t slot = 0; slot < names.size(); ++slot) frame[slot] = generator.SlotValue();
      // p and q are mostly bools, a, b, c mostly ints, so that most rounds type-check.
      if (generator.Pick(4) != 0) frame[3] = Value::Bool(generator.Pick(2) == 0);
      if (generator.Pick(4) != 0) frame[4] = Value::Bool(generator.Pick(2) == 0);
      const Value expected = (*tree)->Evaluate(frame);
      const Value actual = (*fast)->Evaluate(frame);
      ++compared;
      if (!expected.is_error()) ++non_error_results;
      if (expected.is_error()) {
        ASSERT_TRUE(actual.is_error()) << text << " gave " << actual.DebugString();
        EXPECT_EQ(actual.error_message(), expected.error_message()) << text;
      } else {
        ASSERT_EQ(actual.kind(), expected.kind()) << text;
        ASSERT_EQ(actual, expected) << text << ": " << actual.DebugString() << " vs "
                                    << expected.DebugString();
      }
    }
  }
  EXPECT_EQ(compared, 60000);
  // The generator must produce enough well-typed cases for the comparison to mean something.
  EXPECT_GT(non_error_results, 10000);
}

TEST(IntCodeTest, GivesUpToTheTreeOnOverflowAndDivisionByZero) {
  Environment env;
  env.Declare("a", 0);
  env.Declare("b", 1);
  auto program = Compile("a * 2 + a / b", env);
  ASSERT_TRUE(program.ok());
  Frame frame = {Value::Int(4), Value::Int(2)};
  frame.resize((*program)->frame_size());
  EXPECT_EQ((*program)->Evaluate(frame), Value::Int(10));
  frame[1] = Value::Int(0);
  EXPECT_EQ((*program)->Evaluate(frame).error_message(), "division by zero");
  frame[0] = Value::Int(std::numeric_limits<int64_t>::max());
  frame[1] = Value::Int(1);
  EXPECT_TRUE((*program)->Evaluate(frame).is_error());
  frame[0] = Value::Double(1.5);
  EXPECT_TRUE((*program)->Evaluate(frame).is_error()) << "double * int has no overload in CEL";
}

}  // namespace
}  // namespace ruleplane::expr
