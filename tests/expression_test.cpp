#include "engine/expr/expression.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "engine/common/json_value.h"
#include "tests/expression_cases.h"

namespace ruleplane::expr {
namespace {

// Variables every evaluation case may use, one slot each.
constexpr const char* kExpressionVariables = R"({
  "x": 2, "n": 3, "half": 0.5, "s": "hello", "empty": "",
  "l": [1, 2, 3], "names": ["a", "b"],
  "m": {"a": {"b": [1, 2, 3]}, "k": "v", "nothing": null},
  "members": [{"name": "m0", "status": "Ready"}, {"name": "m1", "status": "NotReady"},
              {"name": "m2", "status": "Ready"}],
  "yes": true, "no": false,
  "observed": "2024-05-01T10:00:00Z"
})";

class ExpressionTest : public ExpressionCaseTest {
 protected:
  ExpressionTest() : ExpressionCaseTest(kExpressionVariables) {}
};

TEST_F(ExpressionTest, Literals) {
  const std::vector<Case> cases = {
      {"null", "null"},
      {"true", "true"},
      {"false", "false"},
      {"0", "0"},
      {"42", "42"},
      {"-42", "-42"},
      {"0x1F", "31"},
      {"9223372036854775807", "9223372036854775807"},
      {"-9223372036854775808", "-9223372036854775808"},
      {"1.5", "1.5"},
      {"2.0", "2.0"},
      {"1e3", "1000.0"},
      {"1.5e-3", "0.0015"},
      {"1e-324", "0.0"},  // below the smallest double: rounds to zero, as strtod and CEL
      {"0.00001e-400 == 0.0", "true"},
      {".5", "0.5"},
      {"-0.25", "-0.25"},
      {R"("a\"b")", R"("a\"b")"},
      {R"('single')", R"("single")"},
      {R"("tab\tnew\nline")", R"("tab\tnew\nline")"},
      {R"("\x41\u00e9\U0001F600\101")",
       "\"A\xC3\xA9\xF0\x9F\x98\x80"
       "A\""},
      {R"("\\ \? \' \`")", R"("\\ ? ' `")"},
      {R"(r"raw\n")", R"("raw\\n")"},
      {R"(R'raw\d+')", R"("raw\\d+")"},
      {"\"\"\"two\nlines\"\"\"", R"("two\nlines")"},
      {"'''it's'''", R"("it's")"},
      {"[]", "[]"},
      {"[1, 'a', [true],]", R"([1, "a", [true]])"},
      {"{}", "{}"},
      {R"({"k": 1, 2: "two", true: null,})", R"({"k": 1, 2: "two", true: null})"},
      {"1 // a comment", "1"},
  };
  ExpectCases(cases);
}

TEST_F(ExpressionTest, IdentifiersSelectionAndIndexing) {
  const std::vector<Case> cases = {
      {"x", "2"},
      {"s", R"("hello")"},
      {"m.k", R"("v")"},
      {"m.a.b", "[1, 2, 3]"},
      {"m.a.b[2]", "3"},
      {"m['k']", R"("v")"},
      {"m.nothing", "null"},
      {"l[0] + l[1.0]", "3"},
      {"members[1].status", R"("NotReady")"},
      {"{1: 'one'}[1]", R"("one")"},
      {"{1: 'one'}[1.0]", R"("one")"},
      {"m.missing", "error: no such key: missing"},
      {"m['missing']", "error: no such key: missing"},
      {"l[3]", "error: index out of range: 3"},
      {"l[-1]", "error: index out of range: -1"},
      {"l[1.5]", "error: no matching overload for '[]' applied to (list, double)"},
      {"x.y", "error: type 'int' does not support field selection (.y)"},
      {"m.nothing.y", "error: type 'null_type' does not support field selection"},
      {"x[0]", "error: no matching overload for '[]' applied to (int, int)"},
      {"has(m.k)", "true"},
      {"has(m.missing)", "false"},
      {"has(m.nothing)", "true"},
      {"has(m.a.b)", "true"},
      {"has(m.missing.b)", "error: no such key: missing"},
      {"m.`k`", R"("v")"},
      {"{'content-type': 1, 'a.b': 2, '/x y': 3}.`content-type`", "1"},
      {"{'a.b': 2}.`a.b`", "2"},
      {"{'/x y': 3}.`/x y`", "3"},
      {"{'in': 4}.`in`", "4"},
      {"has({'a-b': 1}.`a-b`)", "true"},
      {"has({'a-b': 1}.`a_b`)", "false"},
      {"has(x.y)", "error: type 'int' does not support field selection"},
      {"{'a': 1, 'a': 2}", "error: repeated key in map literal: \"a\""},
      {"{1.5: 1}", "error: unsupported map key type: double"},
  };
  ExpectCases(cases);
}

TEST_F(ExpressionTest, Arithmetic) {
  const std::vector<Case> cases = {
      {"1 + 2 * 3", "7"},
      {"(1 + 2) * 3", "9"},
      {"10 - 4 - 3", "3"},
      {"7 / 2", "3"},
      {"-7 / 2", "-3"},
      {"7 / -2", "-3"},
      {"7 % 2", "1"},
      {"-7 % 2", "-1"},
      {"7 % -2", "1"},
      {"1.5 + 1.0", "2.5"},
      {"half * 4.0", "2.0"},
      {"1.0 / 0.0", "double(\"Infinity\")"},
      {"-x", "-2"},
      {"--x", "2"},
      {"-half", "-0.5"},
      {"'ab' + 'cd'", R"("abcd")"},
      {"[1] + [2, 3]", "[1, 2, 3]"},
      {"1 / 0", "error: division by zero"},
      {"1 % 0", "error: modulus by zero"},
      {"1 + 1.0", "error: no matching overload for '+' applied to (int, double)"},
      {"half * 2", "error: no matching overload for '*' applied to (double, int)"},
      {"1.5 % 1.0", "error: no matching overload for '%' applied to (double, double)"},
      {"'a' + 1", "error: no matching overload for '+' applied to (string, int)"},
      {"-'a'", "error: no matching overload for '-' applied to (string)"},
      {"!1", "error: no matching overload for '!' applied to (int)"},
      // Overflow boundaries.
      {"9223372036854775807 + 1", "error: integer overflow"},
      {"9223372036854775806 + 1", "9223372036854775807"},
      {"-9223372036854775808 - 1", "error: integer overflow"},
      {"-9223372036854775807 - 1", "-9223372036854775808"},
      {"9223372036854775807 * 2", "error: integer overflow"},
      {"-9223372036854775808 * -1", "error: integer overflow"},
      {"-9223372036854775808 / -1", "error: integer overflow"},
      {"-9223372036854775808 % -1", "error: integer overflow"},
      {"-(-9223372036854775808)", "error: integer overflow"},
      {"--9223372036854775808", "error: integer overflow"},
      {"-9223372036854775808 / 1", "-9223372036854775808"},
  };
  ExpectCases(cases);
}

TEST_F(ExpressionTest, Comparisons) {
  const std::vector<Case> cases = {
      {"2 * x > n", "true"},
      {"x == 2", "true"},
      {"x != 2", "false"},
      {"x < n && x <= 2 && n > x && n >= 3", "true"},
      {"1 == 1.0", "true"},
      {"1 != 1.5", "true"},
      {"1 < 1.5", "true"},
      {"2.0 >= 2", "true"},
      {"9223372036854775807 == 9223372036854775808.0", "false"},
      {"'a' < 'b'", "true"},
      {"'abc' >= 'abd'", "false"},
      {"false < true", "true"},
      {"[1, 2] == [1, 2]", "true"},
      {"[1, 2] == [2, 1]", "false"},
      {"[1] == [1.0]", "true"},
      {"{'a': 1, 'b': 2} == {'b': 2, 'a': 1}", "true"},
      {"{'a': 1} == {'a': 2}", "false"},
      {"null == null", "true"},
      {"m.nothing == null", "true"},
      {"1 == 'a'", "false"},
      {"'1' != 1", "true"},
      {"null == 0", "false"},
      {"double('NaN') == double('NaN')", "false"},
      {"double('NaN') < 1.0", "false"},
      {"1 < 'a'", "error: no matching overload for '<' applied to (int, string)"},
      {"[1] < [2]", "error: no matching overload for '<' applied to (list, list)"},
      {"null <= null", "error: no matching overload for '<=' applied to (null_type, null_type)"},
      {"x in [1, 2]", "true"},
      {"x in [1.0, 2.0]", "true"},
      {"5 in l", "false"},
      {"'k' in m", "true"},
      {"'z' in m", "false"},
      {"s in names", "false"},
      {"1 in 'abc'", "error: no matching overload for 'in' applied to (int, string)"},
  };
  ExpectCases(cases);
}

// CEL's && and ||: commutative, error-absorbing, and short-circuiting from the left.
TEST_F(ExpressionTest, LogicalTruthTables) {
  const std::string error = "(1 / 0 == 1)";
  const std::vector<std::pair<std::string, std::string>> operands = {
      {"true", "T"}, {"false", "F"}, {error, "E"}, {"1", "N"}};
  // Expected outcome for (left, right): T, F, or an error (E: division by zero, N: no matching overload).
  const std::map<std::string, std::string> and_table = {
      {"TT", "T"}, {"TF", "F"}, {"TE", "E"}, {"TN", "N"},  //
      {"FT", "F"}, {"FF", "F"}, {"FE", "F"}, {"FN", "F"},  //
      {"ET", "E"}, {"EF", "F"}, {"EE", "E"}, {"EN", "E"},  //
      {"NT", "N"}, {"NF", "F"}, {"NE", "E"}, {"NN", "N"},
  };
  const std::map<std::string, std::string> or_table = {
      {"TT", "T"}, {"TF", "T"}, {"TE", "T"}, {"TN", "T"},  //
      {"FT", "T"}, {"FF", "F"}, {"FE", "E"}, {"FN", "N"},  //
      {"ET", "T"}, {"EF", "E"}, {"EE", "E"}, {"EN", "E"},  //
      {"NT", "T"}, {"NF", "N"}, {"NE", "E"}, {"NN", "N"},
  };
  for (const auto& [left, left_code] : operands) {
    for (const auto& [right, right_code] : operands) {
      for (const bool is_and : {true, false}) {
        const std::string text = left + (is_and ? " && " : " || ") + right;
        const std::string expected = (is_and ? and_table : or_table).at(left_code + right_code);
        const Value result = Eval(text);
        if (expected == "T" || expected == "F") {
          EXPECT_EQ(result.DebugString(), expected == "T" ? "true" : "false") << text;
        } else {
          ASSERT_TRUE(result.is_error()) << text << " gave " << result.DebugString();
          EXPECT_NE(
              result.error_message().find(expected == "E" ? "division by zero" : "no matching overload"),
              std::string::npos)
              << text << ": " << result.error_message();
        }
      }
    }
  }
}

TEST_F(ExpressionTest, LogicalOperatorsShortCircuitTheRightSide) {
  // The right side would exceed the budget: an error if evaluated.
  Budget for_and(2), for_or(2), for_both(2);
  EXPECT_EQ(Eval("no && l.all(i, i > 0)", {}, &for_and).DebugString(), "false");
  EXPECT_EQ(Eval("yes || l.all(i, i > 0)", {}, &for_or).DebugString(), "true");
  EXPECT_TRUE(Eval("yes && l.all(i, i > 0)", {}, &for_both).is_error());
}

TEST_F(ExpressionTest, NotAndConditional) {
  const std::vector<Case> cases = {
      {"!yes", "false"},
      {"!!yes", "true"},
      {"yes ? 'a' : 'b'", R"("a")"},
      {"no ? 'a' : 'b'", R"("b")"},
      {"x > 1 ? x * 10 : 1 / 0", "20"},
      {"no ? 1 / 0 : 1", "1"},
      {"yes ? 1 : no ? 2 : 3", "1"},
      {"no ? 1 : no ? 2 : 3", "3"},
      {"x ? 1 : 2", "error: no matching overload for '?:' applied to (int)"},
      {"(1 / 0 == 1) ? 1 : 2", "error: division by zero"},
  };
  ExpectCases(cases);
}

TEST_F(ExpressionTest, Size) {
  const std::vector<Case> cases = {
      {"size(s)", "5"},
      {"s.size()", "5"},
      {"size('h\u00e9llo \U0001F600')", "7"},
      {"size(l)", "3"},
      {"l.size()", "3"},
      {"size(m)", "3"},
      {"size([])", "0"},
      {"empty.size()", "0"},
      {"size(x)", "error: no matching overload for 'size' applied to (int)"},
  };
  ExpectCases(cases);
}

TEST_F(ExpressionTest, Macros) {
  const std::vector<Case> cases = {
      {"l.all(i, i > 0)", "true"},
      {"l.all(i, i > 1)", "false"},
      {"l.exists(i, i == 2)", "true"},
      {"l.exists(i, i == 7)", "false"},
      {"l.exists_one(i, i > 2)", "true"},
      {"l.exists_one(i, i > 1)", "false"},
      {"l.filter(i, i % 2 == 1)", "[1, 3]"},
      {"l.map(i, i * i)", "[1, 4, 9]"},
      {"l.map(i, i > 1, i * 10)", "[20, 30]"},
      {"members.filter(m, m.status == 'Ready').map(m, m.name)", R"(["m0", "m2"])"},
      {"members.filter(m, m.status == 'Ready').size() * 2 > n", "true"},
      {"m.filter(k, k != 'k')", R"(["a", "nothing"])"},
      {"m.map(k, k)", R"(["a", "k", "nothing"])"},
      {"{'a': 1, 'b': 2}.all(k, v, v > 0)", "true"},
      {"{'a': 1, 'b': 2}.exists(k, v, k == 'b' && v == 2)", "true"},
      {"names.all(i, v, names[i] == v)", "true"},
      {"names.exists_one(i, v, i == 1 && v == 'b')", "true"},
      {"[].all(i, false)", "true"},
      {"[].exists(i, true)", "false"},
      {"l.map(i, l.map(j, i * j))", "[[1, 2, 3], [2, 4, 6], [3, 6, 9]]"},
      {"l.exists(x, x == 3)", "true"},  // the loop variable shadows the declared x
      {"l.all(i, i > 0) && x == 2", "true"},
      {"[[1, 2], [3]].map(a, a.map(b, b + 1))", "[[2, 3], [4]]"},
      // all/exists absorb errors like && and ||; the others propagate them.
      {"[0, 1].all(i, 1 / i > 5)", "false"},
      {"[0, 1].all(i, 1 / i > 0)", "error: division by zero"},
      {"[0, 1].exists(i, 1 / i == 1)", "true"},
      {"[0, 1].exists(i, 1 / i == 7)", "error: division by zero"},
      {"[0, 1].exists_one(i, 1 / i == 1)", "error: division by zero"},
      {"[0, 1].filter(i, 1 / i == 1)", "error: division by zero"},
      {"[0, 1].map(i, 1 / i)", "error: division by zero"},
      {"l.all(i, i)", "error: predicate of 'all' returned int, expected bool"},
      {"l.filter(i, 1)", "error: predicate of 'filter' returned int, expected bool"},
      {"x.all(i, true)", "error: no matching overload for 'all' applied to (int)"},
      {"(1 / 0).all(i, true)", "error: division by zero"},
  };
  ExpectCases(cases);
}

TEST_F(ExpressionTest, MacroIterationsCountAgainstTheBudget) {
  Budget enough(3);
  EXPECT_EQ(Eval("l.map(i, i)", {}, &enough).DebugString(), "[1, 2, 3]");
  EXPECT_EQ(enough.used(), 3);
  Budget short_by_one(3);
  const Value result = Eval("l.map(i, i + 1).exists(i, i > 3)", {}, &short_by_one);
  ASSERT_TRUE(result.is_error());
  EXPECT_NE(result.error_message().find("evaluation budget of 3 exceeded"), std::string::npos)
      << result.error_message();
}

TEST_F(ExpressionTest, NestedMacrosShareOneBudget) {
  // Each macro is small; together they are 10^3 iterations over a folded list
  // and then 10^9: the budget stops them, quickly, whatever the nesting.
  Budget budget(100'000);
  const Value result = Eval(
      "[1,2,3,4,5,6,7,8,9,10].map(a, [1,2,3,4,5,6,7,8,9,10].map(b, [1,2,3,4,5,6,7,8,9,10]))"
      ".all(x, x.all(y, y.all(z, l.all(p, l.all(q, l.all(r, l.all(s, l.all(t, l.all(u, l.all(v, l.all(w,"
      " p + q + r + s + t + u + v + w + z > 0)))))))))))",
      {}, &budget);
  ASSERT_TRUE(result.is_error()) << result.DebugString();
  EXPECT_TRUE(budget.exhausted());
  EXPECT_LT(budget.used(), 100'100);
}

TEST_F(ExpressionTest, TheBudgetCannotBeAbsorbed) {
  // `true || e` and `exists` absorb other errors; an exhausted budget is not absorbed.
  Budget budget(5);
  const Value result = Eval("[1, 2, 3, 4, 5, 6, 7].exists(i, i == 7) || true", {}, &budget);
  ASSERT_TRUE(result.is_error()) << result.DebugString();
  EXPECT_NE(result.error_message().find("evaluation budget"), std::string::npos);
}

TEST_F(ExpressionTest, StringsBuiltCountTheirBytes) {
  // Each replace doubles the string: 2^40 bytes if nothing stopped it. The
  // size is checked before the string is built.
  std::string text = "'ab'";
  for (int i = 0; i < 40; ++i) text += ".replace('a', 'aa').replace('b', 'bb')";
  Budget budget(1'000'000);
  const Value result = Eval(text, {}, &budget);
  ASSERT_TRUE(result.is_error());
  EXPECT_NE(result.error_message().find("evaluation budget of 1000000 exceeded"), std::string::npos)
      << result.error_message();
  Budget joined(1'000);
  EXPECT_TRUE(Eval("l.map(i, s + s + s + s).join()", {}, &joined).is_string());
  Budget too_small(40);
  EXPECT_TRUE(Eval("l.map(i, s + s + s + s).join()", {}, &too_small).is_error());
}

TEST_F(ExpressionTest, RegexStepsCountAgainstTheBudget) {
  // A pattern that backtracks exponentially: each element runs into the match
  // limit and is charged all of it, so `exists` cannot retry it for long.
  Limits limits;
  limits.regex_match_limit = 10'000;
  Budget budget(1'000'000);
  const Value result =
      Eval("lists.range(2000).exists(i, ('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' + string(i)).matches('^(a|aa)+$'))",
           limits, &budget);
  ASSERT_TRUE(result.is_error()) << result.DebugString();
  EXPECT_TRUE(budget.exhausted());
  Limits largest;  // the growing step limits must stop at any match limit
  largest.regex_match_limit = UINT32_MAX;
  EXPECT_EQ(Eval("s.matches('^h')", largest).DebugString(), "true");
  Budget ample;
  EXPECT_EQ(Eval("s.matches('^h.l+o$')", {}, &ample).DebugString(), "true");
  EXPECT_GT(ample.used(), 0);
  EXPECT_LT(ample.used(), 100);
}

TEST_F(ExpressionTest, ConstantFoldingHasABudget) {
  // Folded at Check: the error is a check error at the expression.
  Budget budget(1'000);
  std::string text = "'ab'";
  for (int i = 0; i < 20; ++i) text += ".replace('a', 'aa')";
  const Value result = Eval(text, {}, &budget);
  ASSERT_TRUE(result.is_error());
  EXPECT_NE(
      result.error_message().find("compile error: constant folding: evaluation budget of 1000 exceeded"),
      std::string::npos)
      << result.error_message();
}

TEST_F(ExpressionTest, StringFunctions) {
  const std::vector<Case> cases = {
      {"s.startsWith('he')", "true"},
      {"s.startsWith('lo')", "false"},
      {"s.endsWith('lo')", "true"},
      {"s.contains('ell')", "true"},
      {"s.contains('')", "true"},
      {"s.contains('xyz')", "false"},
      {"s.matches('^h.l+o$')", "true"},
      {"s.matches('ell')", "true"},  // unanchored, as in CEL
      {"matches(s, '^x')", "false"},
      {"'caf\u00e9'.matches('^caf.$')", "true"},  // . is one code point
      {"s.matches(names[0])", "false"},           // pattern known only at evaluation
      {"'a+'.matches('a' + '+')", "true"},        // constant pattern after folding
      {"s.matches(s + '(')", "error: invalid regular expression 'hello(': missing closing parenthesis"},
      {"x.startsWith('a')", "error: no matching overload for 'startsWith' applied to (int, string)"},
      {"s.matches(1)", "error: no matching overload for 'matches' applied to (string, int)"},
  };
  ExpectCases(cases);
}

TEST_F(ExpressionTest, RegexMatchLimit) {
  Limits limits;
  limits.regex_match_limit = 1000;
  const Value result = Eval("'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!'.matches('^(a|aa)+$')", limits);
  ASSERT_TRUE(result.is_error()) << result.DebugString();
  EXPECT_NE(result.error_message().find("match limit"), std::string::npos) << result.error_message();
  EXPECT_EQ(Eval("'aaaa!'.matches('^(a|aa)+!$')", limits).DebugString(), "true");
}

TEST_F(ExpressionTest, Conversions) {
  const std::vector<Case> cases = {
      {"int(7)", "7"},
      {"int(2.9)", "2"},
      {"int(-2.9)", "-2"},
      {"int('-42')", "-42"},
      {"int('+42')", "42"},
      {"int(9223372036854774784.0)", "9223372036854774784"},  // the largest double below 2^63
      {"int(-9223372036854774784.0)", "-9223372036854774784"},
      {"int(-9223372036854775808.0)", "error: range error: -9223372036854775808 does not fit in an int"},
      {"int(9223372036854775808.0)", "error: range error: 9223372036854775808 does not fit in an int"},
      {"int(1e19)", "error: range error: 1e+19 does not fit in an int"},
      {"int(1.0 / 0.0)", "error: range error: +Inf does not fit in an int"},
      {"int(double('NaN'))", "error: range error: NaN does not fit in an int"},
      {"int('9223372036854775808')", "error: integer overflow"},
      {"int('4x')", "error: cannot convert string \"4x\" to int"},
      {"int('')", "error: cannot convert string"},
      {"int('+-5')", "error: cannot convert string \"+-5\" to int"},
      {"double('+-5')", "error: cannot convert string \"+-5\" to double"},
      {"int(timestamp('2024-05-01T10:00:00Z'))", "1714557600"},
      {"int(timestamp('1969-12-31T23:59:59.5Z'))", "-1"},
      {"int(true)", "error: no matching overload for 'int' applied to (bool)"},
      {"double(3)", "3.0"},
      {"double('2.5')", "2.5"},
      {"double('x')", "error: cannot convert string \"x\" to double"},
      {"string(42)", R"("42")"},
      {"string(-1.5)", R"("-1.5")"},
      {"string(true)", R"("true")"},
      {"string('s')", R"("s")"},
      {"string(timestamp('2024-05-01T10:00:00.250+02:00'))", R"("2024-05-01T08:00:00.25Z")"},
      {"string(duration('5m'))", R"("300s")"},
      {"string(duration('1.5s'))", R"("1.5s")"},
      {"string(l)", "error: no matching overload for 'string' applied to (list)"},
      {"timestamp(0)", "timestamp(\"1970-01-01T00:00:00Z\")"},
      {"timestamp(observed) == timestamp('2024-05-01T12:00:00+02:00')", "true"},
      {"timestamp('2024-13-01T00:00:00Z')", "error: invalid timestamp '2024-13-01T00:00:00Z'"},
      {"timestamp('yesterday')", "error: invalid timestamp"},
      {"duration('1h30m5s')", "duration(\"5405s\")"},
      {"duration('-1.5h')", "duration(\"-5400s\")"},
      {"duration('1ms')", "duration(\"0.001s\")"},
      {"duration('2us') + duration('3ns')", "duration(\"0.000002003s\")"},
      {"duration('5 minutes')", "error: invalid duration"},
      {"duration('3000000h')", "error: invalid duration '3000000h': out of range"},
  };
  ExpectCases(cases);
}

TEST_F(ExpressionTest, TimestampAndDurationArithmetic) {
  const std::vector<Case> cases = {
      {"timestamp(observed) + duration('90s')", "timestamp(\"2024-05-01T10:01:30Z\")"},
      {"duration('90s') + timestamp(observed)", "timestamp(\"2024-05-01T10:01:30Z\")"},
      {"timestamp(observed) - duration('1h')", "timestamp(\"2024-05-01T09:00:00Z\")"},
      {"timestamp(observed) - timestamp('2024-05-01T09:55:00Z')", "duration(\"300s\")"},
      {"timestamp(observed) - timestamp('2024-05-01T09:55:00Z') > duration('4m')", "true"},
      {"duration('1h') + duration('30m') == duration('90m')", "true"},
      {"duration('1h') - duration('2h')", "duration(\"-3600s\")"},
      {"-duration('1s')", "duration(\"-1s\")"},
      {"timestamp('2024-01-01T00:00:00Z') < timestamp(observed)", "true"},
      {"duration('1s') < duration('1m')", "true"},
      {"timestamp('2262-04-11T23:47:16Z') + duration('1s')", R"(timestamp("2262-04-11T23:47:17Z"))"},
      {"timestamp('9999-12-31T23:59:59Z') + duration('1s')", "error: timestamp out of range"},
      {"timestamp('0001-01-01T00:00:00Z') - duration('1ns')", "error: timestamp out of range"},
      {"timestamp('9999-12-31T23:59:59Z') - timestamp('0001-01-01T00:00:00Z')",
       "error: duration out of range"},
      {"timestamp(253402300799)", R"(timestamp("9999-12-31T23:59:59Z"))"},
      {"timestamp(253402300800)", "error: timestamp out of range"},
      {"timestamp(-62135596801)", "error: timestamp out of range"},
      {"int(timestamp('0001-01-01T00:00:00Z'))", "-62135596800"},
      {"duration('2562047h') + duration('2562047h')", "error: duration overflow"},
      {"timestamp(observed) + 1",
       "error: no matching overload for '+' applied to (google.protobuf.Timestamp, int)"},
      {"timestamp(observed) < duration('1s')", "error: no matching overload for '<'"},
  };
  ExpectCases(cases);
}

struct ErrorCase {
  const char* text;
  int line;
  int column;
  const char* message;  // a substring
};

TEST_F(ExpressionTest, ParseErrorsHavePositionsAndSayWhatWasExpected) {
  const std::vector<ErrorCase> cases = {
      {"(1 + 2", 1, 7, "expected ')' but found end of input"},
      {"(1 + 2 x", 1, 8, "expected ')' but found 'x'"},
      {"1 +", 1, 4, "expected an expression but found end of input"},
      {"1 2", 1, 3, "expected an operator or the end of the expression but found '2'"},
      {"[1, 2", 1, 6, "expected ',' or ']' but found end of input"},
      {"{'a' 1}", 1, 6, "expected ':' but found '1'"},
      {"x.", 1, 3, "expected a field name after '.' but found end of input"},
      {"a ? b", 1, 6, "expected ':' but found end of input"},
      {"x = 1", 1, 3, "unexpected '='; did you mean '=='?"},
      {"x & y", 1, 3, "did you mean '&&'?"},
      {"x # y", 1, 3, "unexpected character '#'"},
      {"'abc", 1, 1, "unterminated string literal"},
      {"'a\nb'", 1, 1, "unterminated string literal"},
      {R"("\q")", 1, 2, "invalid escape sequence '\\q'"},
      {R"("\x4")", 1, 2, "invalid escape sequence: expected 2 hexadecimal digits"},
      {R"("\uD800")", 1, 2, "not a Unicode code point"},
      {"9223372036854775808", 1, 1, "integer literal out of range"},
      {"-9223372036854775809", 1, 1, "integer literal out of range"},
      {"123abc", 1, 1, "invalid number '123a'"},
      {"x + 1e309", 1, 5, "double literal out of range: 1e309"},
      {"1000e306", 1, 1, "double literal out of range"},
      {"x.`a", 1, 3, "unterminated quoted field name"},
      {"x.``", 1, 3, "empty quoted field name"},
      {"x.`a+b`", 1, 5, "unexpected character '+' in a quoted field name"},
      {"`a`", 1, 1, "a quoted name can only select a field"},
      {"x.`a`(1)", 1, 3, "a quoted name can only select a field: `a` cannot be called"},
      {"x +\n  (y", 2, 5, "expected ')' but found end of input"},
      {"x &&\n\n   in", 3, 4, "expected an expression but found 'in'"},
      {"if", 1, 1, "reserved identifier 'if'"},
      {"has(x)", 1, 5, "invalid argument to has()"},
      {"l.all(1, true)", 1, 7, "argument 1 of the 'all' macro must be a simple name"},
      {"l.filter(a, b, c)", 1, 3, "wrong number of arguments to the 'filter' macro"},
      {"l.map(a)", 1, 3, "wrong number of arguments to the 'map' macro"},
      // Unsupported CEL constructs are named.
      {"123u", 1, 1, "unsupported: uint literals (123u)"},
      {"x + 0x1u", 1, 5, "unsupported: uint literals (0x1u)"},
      {"b'abc'", 1, 1, "unsupported: bytes literals"},
      {"x == B\"abc\"", 1, 6, "unsupported: bytes literals"},
      {"Pod{name: 'a'}", 1, 1, "unsupported: message construction"},
      {"k8s.io.Pod{name: 'a'}", 1, 8, "unsupported: message construction"},
      {"m.?k", 1, 3, "unsupported: optional field selection"},
      {"[?x]", 1, 2, "unsupported: optional list elements"},
      {".x", 1, 1, "unsupported: absolute names"},
  };
  for (const ErrorCase& c : cases) {
    auto ast = Parse(c.text);
    ASSERT_FALSE(ast.ok()) << c.text;
    EXPECT_EQ(ast.error().code, ErrorCode::kParse) << c.text;
    EXPECT_EQ(ast.error().position.line, c.line) << c.text << ": " << ast.error().message;
    EXPECT_EQ(ast.error().position.column, c.column) << c.text << ": " << ast.error().message;
    EXPECT_NE(ast.error().message.find(c.message), std::string::npos)
        << c.text << ": " << ast.error().message;
  }
}

TEST_F(ExpressionTest, DeepNestingIsAParseErrorNotACrash) {
  EXPECT_FALSE(Parse(std::string(5000, '(') + "1" + std::string(5000, ')')).ok());
  EXPECT_FALSE(Parse(std::string(5000, '[') + std::string(5000, ']')).ok());
  std::string long_chain = "1";
  for (int i = 0; i < 5000; ++i) long_chain += " + 1";
  auto ast = Parse(long_chain);
  ASSERT_FALSE(ast.ok());
  EXPECT_NE(ast.error().message.find("too large"), std::string::npos) << ast.error().message;
  std::string modest = "1";
  for (int i = 0; i < 100; ++i) modest += " + 1";
  EXPECT_EQ(Eval(modest).DebugString(), "101");
}

TEST_F(ExpressionTest, CheckErrorsHavePositions) {
  const std::vector<ErrorCase> cases = {
      {"y + 1", 1, 1, "undeclared reference to 'y'"},
      {"x + \n  ready", 2, 3, "undeclared reference to 'ready'"},
      {"l.all(i, j > 0)", 1, 10, "undeclared reference to 'j'"},
      {"l.map(i, i) + [i]", 1, 16, "undeclared reference to 'i'"},
      {"foo(1)", 1, 1, "unsupported: function 'foo'"},
      {"s.toLower()", 1, 3, "unsupported: function 'toLower'"},
      {"uint(1)", 1, 1, "unsupported: function 'uint'"},
      {"s.int()", 1, 3, "unsupported: 'int' as a method"},
      {"startsWith(s, 'h')", 1, 1, "unsupported: 'startsWith' as a global function"},
      {"size(s, 1)", 1, 1, "wrong number of arguments to 'size': expected 1, got 2"},
      {"s.startsWith()", 1, 3, "wrong number of arguments to 'startsWith': expected 1, got 0"},
      {"s.matches('(')", 1, 11, "invalid regular expression '(': missing closing parenthesis"},
      {"matches(s,\n 'a[')", 2, 2, "invalid regular expression 'a['"},
      {"s.matches('a' + '(')", 1, 11, "invalid regular expression 'a('"},
      {"l.all(k, k, true)", 1, 3, "must have different names"},
  };
  for (const ErrorCase& c : cases) {
    auto program = Compile(c.text, env_);
    ASSERT_FALSE(program.ok()) << c.text;
    EXPECT_EQ(program.error().code, ErrorCode::kCheck) << c.text;
    EXPECT_EQ(program.error().position.line, c.line) << c.text << ": " << program.error().message;
    EXPECT_EQ(program.error().position.column, c.column) << c.text << ": " << program.error().message;
    EXPECT_NE(program.error().message.find(c.message), std::string::npos)
        << c.text << ": " << program.error().message;
  }
}

TEST(ProgramTest, ConstantsAreFolded) {
  Environment env;
  env.Declare("n", 0);
  const std::vector<std::pair<const char*, const char*>> constants = {
      {"3", "3"},
      {"-1", "-1"},
      {"\"x\"", "\"x\""},
      {"[\"a\", \"b\"]", "[\"a\", \"b\"]"},
      {"1 + 2 * 3", "7"},
      {"duration('5m')", "duration(\"300s\")"},
      {"[1, 2, 3].filter(i, i > 1)", "[2, 3]"},
      {"{'a': [1]}.a.size()", "1"},
  };
  for (const auto& [text, expected] : constants) {
    auto program = Compile(text, env);
    ASSERT_TRUE(program.ok()) << text << ": " << program.error().message;
    ASSERT_TRUE((*program)->constant().has_value()) << text;
    EXPECT_EQ((*program)->constant()->DebugString(), expected) << text;
    EXPECT_TRUE((*program)->referenced_slots().empty()) << text;
  }
  for (const char* text : {"n", "n + 1", "1 / 0", "[1, 2].map(i, i + n)", "[n]", "9223372036854775807 + 1"}) {
    auto program = Compile(text, env);
    ASSERT_TRUE(program.ok()) << text;
    EXPECT_FALSE((*program)->constant().has_value()) << text;
  }
}

TEST(ProgramTest, ReferencedSlotsAreTheDeclaredSlotsRead) {
  Environment env;
  env.Declare("a", 0);
  env.Declare("b", 1);
  env.Declare("c", 2);
  env.Declare("b", 3);  // shadows the earlier b
  auto program = Compile("c + b + c + [1].map(i, i + a)[0]", env);
  ASSERT_TRUE(program.ok()) << program.error().message;
  EXPECT_EQ((*program)->referenced_slots(), (std::vector<int>{0, 2, 3}));
  EXPECT_EQ((*program)->frame_size(), 5);  // 4 declared slots, then one comprehension variable
}

TEST(ProgramTest, ComprehensionVariablesUseScratchSlotsFromTheFirstFreeSlot) {
  Environment env;
  env.Declare("l", 0);
  env.set_first_free_slot(10);
  auto program = Compile("l.map(x, l.all(k, v, v > 0) && x > 0)", env);
  ASSERT_TRUE(program.ok()) << program.error().message;
  EXPECT_EQ((*program)->frame_size(), 13);
  Frame frame((*program)->frame_size());
  frame[0] = Value::MakeList({Value::Int(1), Value::Int(2)});
  EXPECT_EQ((*program)->Evaluate(frame).DebugString(), "[true, true]");
  for (int slot = 1; slot < 10; ++slot) EXPECT_TRUE(frame[slot].is_null()) << slot;
}

TEST(ProgramTest, QualifiedNamesResolveToTheLongestDeclaredPrefix) {
  Environment env;
  env.Declare("a.b.c", 0);
  env.Declare("a.b", 1);
  env.Declare("x", 2);
  Frame frame(4);  // and a slot for a comprehension variable
  frame[0] = Value::String("whole");
  frame[1] = *ParseJson(R"({"c": "field", "d": "other"})");
  frame[2] = *ParseJson(R"({"y": 1})");
  for (const auto& [text, expected] : std::vector<std::pair<std::string, std::string>>{
           {"a.b.c", R"("whole")"},
           {"a.b.d", R"("other")"},
           {"a.b.`c`", R"("whole")"},
           {"x.y", "1"},
           {"has(a.b.d)", "true"},
           {"[{'b': 5}].map(a, a.b)", "[5]"},  // a comprehension variable is no prefix
       }) {
    auto program = Compile(text, env);
    ASSERT_TRUE(program.ok()) << text << ": " << program.error().message;
    EXPECT_EQ((*program)->Evaluate(frame).DebugString(), expected) << text;
  }
  EXPECT_FALSE(Compile("a.c", env).ok());
}

TEST(ProgramTest, TooSmallFrameIsAnErrorValue) {
  Environment env;
  env.Declare("a", 0);
  auto program = Compile("[1].all(i, i == a)", env);
  ASSERT_TRUE(program.ok());
  Frame frame(1);
  EXPECT_TRUE((*program)->Evaluate(frame).is_error());
}

TEST(ProgramTest, ExampleFromTheHeader) {
  Environment env;
  env.Declare("ready", 0);
  env.Declare("n", 1);
  auto ast = Parse("2 * ready > n");
  ASSERT_TRUE(ast.ok());
  auto program = Check(**ast, env);
  ASSERT_TRUE(program.ok());
  Frame frame((*program)->frame_size());
  frame[0] = Value::Int(2);
  frame[1] = Value::Int(3);
  EXPECT_EQ((*program)->Evaluate(frame), Value::Bool(true));
  frame[0] = Value::Int(1);
  EXPECT_EQ((*program)->Evaluate(frame), Value::Bool(false));
}

TEST(ProgramTest, ProgramsEvaluateConcurrently) {
  Environment env;
  env.Declare("names", 0);
  env.Declare("pattern", 1);
  auto program =
      Compile("names.filter(n, n.matches('^m[0-9]+$') && n.matches(pattern)).map(n, n + '!').size()", env);
  ASSERT_TRUE(program.ok()) << program.error().message;
  Value::List names;
  for (int i = 0; i < 50; ++i) names.push_back(Value::String("m" + std::to_string(i)));
  std::vector<std::thread> threads;
  std::vector<int64_t> results(4, -1);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 200; ++round) {
        Frame frame((*program)->frame_size());
        frame[0] = Value::MakeList(names);
        frame[1] = Value::String(t % 2 == 0 ? "1" : "^m");
        const Value v = (*program)->Evaluate(frame);
        results[t] = v.is_int() ? v.int_value() : -2;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(results, (std::vector<int64_t>{14, 50, 14, 50}));
}

}  // namespace
}  // namespace ruleplane::expr
