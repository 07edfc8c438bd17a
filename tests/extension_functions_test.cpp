// The functions beyond CEL's standard library: the strings extension,
// cronNext, backups and parseBackupName; and overloads by arity.
#include <gtest/gtest.h>

#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "engine/common/json_value.h"
#include "engine/common/time_util.h"
#include "engine/expr/expression.h"
#include "engine/extensions/cron_schedule.h"
#include "tests/expression_cases.h"

namespace ruleplane::expr {
namespace {

constexpr const char* kExtensionVariables = R"({
  "s": "hello", "csv": "a,b,c", "sep": ",", "n": 2, "x": 7,
  "names": ["a", "b"], "mixed": ["a", 1],
  "schedule": "0 */6 * * *", "badSchedule": "61 * * * *", "leapDay": "0 0 29 2 *",
  "paths": [
    "backups/etcd-main/v2/Incr-00001001-00001100-1700000300.gz",
    "backups/etcd-main/v2/Full-00000000-00001000-1700000000",
    "backups/etcd-main/v1/Backup-1690000000/Full-00000000-00000500-1690000000",
    "backups/etcd-main/v1/Backup-1690000000/Incr-00000501-00000600-1690000100.Z",
    "backups/etcd-main/v2/Full-00000000-00001100-1700000400.zlib.final",
    "backups/etcd-main/v2/Full-00000000-00001100-1700000400.zlib.final/2",
    "backups/etcd-main/v2/Full-00000000-00001100-1700000400.zlib.final/1",
    "backups/etcd-main/v2/Full-00000000-00001100-1700000350",
    "backups/etcd-main/v2/Full-Snapshot-00000000-00001000-1700000000",
    "backups/etcd-main/v2/Incremental-Snapshot-00001001-00001100-1700000300",
    "backups/etcd-main/v2/Incr-00001200-00001100-1700000500",
    "backups/etcd-main/v2/Full-00000000-00001000-1700000000.bz2",
    "backups/etcd-main/v3/Full-00000000-00001000-1700000000",
    "backups/etcd-main/v1/Full-00000000-00001000-1700000000",
    "backups/etcd-main/v1/Backup-1690000000/",
    "backups/etcd-main/v2/"
  ]
})";

struct CheckErrorCase {
  const char* text;
  int column;
  const char* message;
};

class ExtensionFunctionsTest : public ExpressionCaseTest {
 protected:
  ExtensionFunctionsTest() : ExpressionCaseTest(kExtensionVariables) {
    Declare("now", Value::MakeTimestamp(*ParseRfc3339("2024-05-01T10:00:00Z")));  // a Wednesday
  }

  // Expected errors are evaluation errors here.
  void ExpectCases(const std::vector<Case>& cases) { ExpressionCaseTest::ExpectCases(cases, true); }

  void ExpectCheckErrors(const std::vector<CheckErrorCase>& cases) {
    for (const CheckErrorCase& c : cases) {
      auto program = Compile(c.text, env_);
      ASSERT_FALSE(program.ok()) << c.text << " compiled";
      EXPECT_EQ(program.error().code, ErrorCode::kCheck) << c.text;
      EXPECT_EQ(program.error().position.line, 1) << c.text;
      EXPECT_EQ(program.error().position.column, c.column) << c.text << ": " << program.error().message;
      EXPECT_NE(program.error().message.find(c.message), std::string::npos)
          << c.text << ": " << program.error().message;
    }
  }
};

TEST_F(ExtensionFunctionsTest, Split) {
  ExpectCases({
      {"'hello world'.split(' ')", R"(["hello", "world"])"},
      {"'hello world events!'.split(' ', 0)", "[]"},
      {"'hello world events!'.split(' ', 1)", R"(["hello world events!"])"},
      {"'hello world events!'.split(' ', 2)", R"(["hello", "world events!"])"},
      {"'hello world events!'.split(' ', -1)", R"(["hello", "world", "events!"])"},
      {"'a,,b,'.split(',')", R"(["a", "", "b", ""])"},
      {"''.split(',')", R"([""])"},
      {"''.split('')", "[]"},
      {"'a\u00a9c'.split('')", "[\"a\", \"\u00a9\", \"c\"]"},
      {"'a\u00a9c'.split('', 2)", "[\"a\", \"\u00a9c\"]"},
      {"csv.split(sep)", R"(["a", "b", "c"])"},
      {"csv.split(sep, n)", R"(["a", "b,c"])"},
      {"'a=1,b=2'.split(',').map(kv, kv.split('=')[1])", R"(["1", "2"])"},
      {"x.split(sep)", "error: no matching overload for 'split' applied to (int, string)"},
      {"csv.split(sep, double(n))",
       "error: no matching overload for 'split' applied to (string, string, double)"},
  });
}

TEST_F(ExtensionFunctionsTest, Substring) {
  ExpectCases({
      {"'tacocat'.substring(4)", R"("cat")"},
      {"'tacocat'.substring(7)", R"("")"},
      {"'tacocat'.substring(0, 4)", R"("taco")"},
      {"'tacocat'.substring(4, 4)", R"("")"},
      {"'ta\u00a9o\u00a9\u03b1T'.substring(2, 6)", "\"\u00a9o\u00a9\u03b1\""},
      {"'ta\u00a9o\u00a9\u03b1T'.substring(5)", "\"\u03b1T\""},
      {"'ta\u00a9o\u00a9\u03b1T'.substring(7, 7)", R"("")"},
      {"s.substring(0)", R"("hello")"},
      {"'tacocat'.substring(40)", "error: substring: index out of range: 40"},
      {"'tacocat'.substring(1, 50)", "error: substring: index out of range: 50"},
      {"'tacocat'.substring(49, 50)", "error: substring: index out of range: 49"},
      {"'tacocat'.substring(4, 3)", "error: substring: invalid range: start 4 is after end 3"},
      {"s.substring(n - 3)", "error: substring: index out of range: -1"},
  });
}

TEST_F(ExtensionFunctionsTest, IndexOfAndLastIndexOf) {
  ExpectCases({
      {"'tacocat'.indexOf('')", "0"},
      {"'tacocat'.indexOf('ac')", "1"},
      {"'tacocat'.indexOf('none')", "-1"},
      {"'tacocat'.indexOf('', 3)", "3"},
      {"'tacocat'.indexOf('a', 3)", "5"},
      {"'tacocat'.indexOf('at', 3)", "5"},
      {"'ta\u00a9o\u00a9\u03b1T'.indexOf('\u00a9')", "2"},
      {"'ta\u00a9o\u00a9\u03b1T'.indexOf('\u00a9', 3)", "4"},
      {"'ta\u00a9o\u00a9\u03b1T'.indexOf('\u00a9\u03b1T', 3)", "4"},
      {"'ta\u00a9o\u00a9\u03b1T'.indexOf('\u00a9\u03b1', 5)", "-1"},
      {"'hello wello'.indexOf('ello', 6)", "7"},
      {"'hello wello'.indexOf('hello wello ')", "-1"},
      {"''.indexOf('a')", "-1"},
      {"'abc'.indexOf('c', 3)", "-1"},
      {"'abc'.indexOf('', 3)", "3"},
      {"'abc'.indexOf('a', 4)", "error: indexOf: index out of range: 4 (size 3)"},
      {"s.indexOf('l', n - 3)", "error: indexOf: index out of range: -1"},
      {"'tacocat'.lastIndexOf('')", "7"},
      {"'tacocat'.lastIndexOf('at')", "5"},
      {"'tacocat'.lastIndexOf('none')", "-1"},
      {"'ta\u00a9o\u00a9\u03b1T'.lastIndexOf('\u00a9')", "4"},
      {"'bananananana'.lastIndexOf('nana')", "8"},
      {"'hello wello'.lastIndexOf('ello')", "7"},
      {"''.lastIndexOf('a')", "-1"},
      {"''.lastIndexOf('')", "0"},
  });
}

TEST_F(ExtensionFunctionsTest, CaseReplaceAndTrim) {
  ExpectCases({
      {"'TacoCat'.lowerAscii()", R"("tacocat")"},
      {"'TacoC\u00c6t'.lowerAscii()", "\"tacoc\u00c6t\""},
      {"'tacoC\u03b1t'.upperAscii()", "\"TACOC\u03b1T\""},
      {"'@[`{'.upperAscii() + '@[`{'.lowerAscii()", R"("@[`{@[`{")"},
      {"s.lowerAscii()", R"("hello")"},
      {"'hello hello'.replace('he', 'we')", R"("wello wello")"},
      {"'hello hello'.replace('he', 'we', -1)", R"("wello wello")"},
      {"'hello hello'.replace('he', 'we', 1)", R"("wello hello")"},
      {"'hello hello'.replace('he', 'we', 0)", R"("hello hello")"},
      {"'hello'.replace('l', '')", R"("heo")"},
      {"'hello'.replace('', '_')", R"("_h_e_l_l_o_")"},
      {"'hello'.replace('', '_', 2)", R"("_h_ello")"},
      {"'a\u00a9'.replace('', '.')", "\".a.\u00a9.\""},
      {"s.replace('x', 'y')", R"("hello")"},
      {"' \\t\\ntrim \\r\\n'.trim()", R"("trim")"},
      {"'\u2000\u3000 x y \u00a0\u0085'.trim()", R"("x y")"},
      {"'\u200bx'.trim()", "\"\u200bx\""},  // zero width space is not white space
      {"'   '.trim()", R"("")"},
      {"''.trim()", R"("")"},
      {"names.trim()", "error: no matching overload for 'trim' applied to (list)"},
  });
}

TEST_F(ExtensionFunctionsTest, Join) {
  ExpectCases({
      {"['x', 'y'].join()", R"("xy")"},
      {"['x', 'y'].join('-')", R"("x-y")"},
      {"[].join()", R"("")"},
      {"[].join('-')", R"("")"},
      {"['solo'].join(', ')", R"("solo")"},
      {"names.join(', ')", R"("a, b")"},
      {"csv.split(sep).join(' ')", R"("a b c")"},
      {"mixed.join()", "error: join: expected a list of strings, element 1 is int"},
      {"s.join()", "error: no matching overload for 'join' applied to (string)"},
  });
}

TEST_F(ExtensionFunctionsTest, CronNext) {
  ExpectCases({
      {"cronNext('*/15 * * * *', now)", R"(timestamp("2024-05-01T10:15:00Z"))"},
      {"cronNext('* * * * *', now)", R"(timestamp("2024-05-01T10:01:00Z"))"},
      {"cronNext('0 10 * * *', now)", R"(timestamp("2024-05-02T10:00:00Z"))"},  // strictly after
      {"cronNext('* * * * *', timestamp('2024-05-01T10:00:59.999Z'))",
       R"(timestamp("2024-05-01T10:01:00Z"))"},
      {"cronNext('30 9 * * *', now)", R"(timestamp("2024-05-02T09:30:00Z"))"},
      {"cronNext('5/20 * * * *', now)", R"(timestamp("2024-05-01T10:05:00Z"))"},
      {"cronNext('10-40/15 8-18/5 * * *', now)", R"(timestamp("2024-05-01T13:10:00Z"))"},
      {"cronNext('0,30 11,12 * * *', now)", R"(timestamp("2024-05-01T11:00:00Z"))"},
      {"cronNext('0 0 ? * ?', now)", R"(timestamp("2024-05-02T00:00:00Z"))"},
      {"cronNext('0 0 2 * *', now)", R"(timestamp("2024-05-02T00:00:00Z"))"},
      {"cronNext('0 12 1 JAN,mar *', now)", R"(timestamp("2025-01-01T12:00:00Z"))"},
      {"cronNext('0 0 1 Jun-Aug/2 *', now)", R"(timestamp("2024-06-01T00:00:00Z"))"},
      {"cronNext('0 0 29 2 *', now)", R"(timestamp("2028-02-29T00:00:00Z"))"},
      {"cronNext('0 0 1 1 *', timestamp('2024-12-31T23:59:00Z'))", R"(timestamp("2025-01-01T00:00:00Z"))"},
      {"cronNext('0 0 * * *', timestamp('1969-12-31T12:00:00Z'))", R"(timestamp("1970-01-01T00:00:00Z"))"},
      // Day of week: names in any case, 7 is Sunday too; now is a Wednesday.
      {"cronNext('0 0 * * 0', now)", R"(timestamp("2024-05-05T00:00:00Z"))"},
      {"cronNext('0 0 * * 7', now)", R"(timestamp("2024-05-05T00:00:00Z"))"},
      {"cronNext('0 0 * * sun', now)", R"(timestamp("2024-05-05T00:00:00Z"))"},
      {"cronNext('0 0 * * 5-7', now)", R"(timestamp("2024-05-03T00:00:00Z"))"},
      {"cronNext('0 0 * * MON-FRI', now)", R"(timestamp("2024-05-02T00:00:00Z"))"},
      // Both day fields restricted: either matches (Monday the 6th, or the 2nd).
      {"cronNext('0 0 1 * MON', now)", R"(timestamp("2024-05-06T00:00:00Z"))"},
      {"cronNext('0 0 2 * MON', now)", R"(timestamp("2024-05-02T00:00:00Z"))"},
      {"cronNext('0 0 * * MON', now)", R"(timestamp("2024-05-06T00:00:00Z"))"},
      {"cronNext('0 0 */1 * MON', now)", R"(timestamp("2024-05-06T00:00:00Z"))"},  // */1 is still *
      {"cronNext('0 0 1-31 * MON', now)", R"(timestamp("2024-05-02T00:00:00Z"))"},
      // Descriptors.
      {"cronNext('@hourly', now)", R"(timestamp("2024-05-01T11:00:00Z"))"},
      {"cronNext('@daily', now)", R"(timestamp("2024-05-02T00:00:00Z"))"},
      {"cronNext('@midnight', now)", R"(timestamp("2024-05-02T00:00:00Z"))"},
      {"cronNext('@weekly', now)", R"(timestamp("2024-05-05T00:00:00Z"))"},
      {"cronNext('@monthly', now)", R"(timestamp("2024-06-01T00:00:00Z"))"},
      {"cronNext('@yearly', now)", R"(timestamp("2025-01-01T00:00:00Z"))"},
      {"cronNext('@annually', now)", R"(timestamp("2025-01-01T00:00:00Z"))"},
      // The full-snapshot period, as etcd-druid computes it.
      {"cronNext(schedule, cronNext(schedule, now)) - cronNext(schedule, now)", R"(duration("21600s"))"},
      {"cronNext('*/30 * * * *', cronNext('*/30 * * * *', now)) - cronNext('*/30 * * * *', now)",
       R"(duration("1800s"))"},
      // Errors at evaluation: a schedule known only then, no activation, overflow, wrong kinds.
      {"cronNext(badSchedule, now)",
       "error: invalid cron schedule \"61 * * * *\": minute: 61 is above the maximum 59"},
      {"cronNext(leapDay, timestamp('2097-03-01T00:00:00Z'))",
       "error: cron schedule \"0 0 29 2 *\" has no activation within 5 years after 2097-03-01T00:00:00Z"},
      {"cronNext(leapDay, timestamp('2099-03-01T00:00:00Z'))", R"(timestamp("2104-02-29T00:00:00Z"))"},
      {"cronNext('@yearly', timestamp('2262-01-01T00:00:00Z'))", R"(timestamp("2263-01-01T00:00:00Z"))"},
      {"cronNext('@yearly', timestamp('9999-01-01T00:00:00Z'))",
       "error: timestamp out of range: the next activation of \"@yearly\" is after the year 9999"},
      {"cronNext(x, now)",
       "error: no matching overload for 'cronNext' applied to (int, google.protobuf.Timestamp)"},
      {"cronNext(schedule, s)", "error: no matching overload for 'cronNext' applied to (string, string)"},
  });
}

TEST_F(ExtensionFunctionsTest, CronScheduleErrorsAreCheckErrorsWhenConstant) {
  ExpectCheckErrors({
      {"cronNext('* * * *', now)", 10, "invalid cron schedule \"* * * *\": expected 5 fields"},
      {"cronNext('* * * * * *', now)", 10, "found 6"},
      {"cronNext('', now)", 10, "empty schedule"},
      {"cronNext('60 * * * *', now)", 10, "minute: 60 is above the maximum 59"},
      {"cronNext('* 24 * * *', now)", 10, "hour: 24 is above the maximum 23"},
      {"cronNext('* * 0 * *', now)", 10, "day of month: 0 is below the minimum 1"},
      {"cronNext('* * 32 * *', now)", 10, "day of month: 32 is above the maximum 31"},
      {"cronNext('* * * 13 *', now)", 10, "month: 13 is above the maximum 12"},
      {"cronNext('* * * * 8', now)", 10, "day of week: 8 is above the maximum 7"},
      {"cronNext('5-2 * * * *', now)", 10, "minute: range start 5 is beyond its end 2"},
      {"cronNext('*/0 * * * *', now)", 10, "minute: the step must be positive"},
      {"cronNext('1-2-3 * * * *', now)", 10, "minute: too many hyphens in '1-2-3'"},
      {"cronNext('*/2/3 * * * *', now)", 10, "minute: too many slashes in '*/2/3'"},
      {"cronNext('*/x * * * *', now)", 10, "minute: step 'x' is not a number"},
      {"cronNext('1,,2 * * * *', now)", 10, "minute: '' is not a number or name"},
      {"cronNext('-5 * * * *', now)", 10, "minute: '' is not a number or name"},
      {"cronNext('FOO * * * *', now)", 10, "minute: 'FOO' is not a number or name"},
      {"cronNext('* * * FOO *', now)", 10, "month: 'FOO' is not a number or name"},
      {"cronNext('* * * * JAN', now)", 10, "day of week: 'JAN' is not a number or name"},
      {"cronNext('* * * * MONDAY', now)", 10, "day of week: 'MONDAY' is not a number or name"},
      {"cronNext('@every 1h', now)", 10, "unknown descriptor"},
      {"cronNext('@Daily', now)", 10, "unknown descriptor"},
      {"cronNext('0 0 30 2 *', now)", 10, "the day of month never occurs in the months given"},
      {"cronNext('0 0 31 4,6,9,11 *', now)", 10, "never occurs"},
  });
}

TEST_F(ExtensionFunctionsTest, ArgumentErrorsAreCheckErrorsWhenConstant) {
  ExpectCheckErrors({
      {"cronNext(1, now)", 10, "wrong argument to 'cronNext': expected string, got int"},
      {"cronNext('@daily', 'tomorrow')", 20, "wrong argument to 'cronNext': expected timestamp, got string"},
      {"'abc'.split(1)", 13, "wrong argument to 'split': expected string, got int"},
      {"s.split(',', '2')", 14, "wrong argument to 'split': expected int, got string"},
      {"[1].trim()", 1, "wrong argument to 'trim': expected string, got list"},
      {"'ab'.join()", 1, "wrong argument to 'join': expected list, got string"},
      {"backups('x')", 9, "wrong argument to 'backups': expected list, got string"},
      {"parseBackupName(1)", 17, "wrong argument to 'parseBackupName': expected string, got int"},
      {"s.substring(-1)", 13, "substring: index out of range: -1"},
      {"s.substring(0, -2)", 16, "substring: index out of range: -2"},
      {"s.indexOf('l', -1)", 16, "indexOf: index out of range: -1"},
  });
}

TEST_F(ExtensionFunctionsTest, OverloadsByArity) {
  ExpectCheckErrors({
      {"s.split()", 3, "wrong number of arguments to 'split': expected 1 or 2, got 0"},
      {"s.split(',', 1, 2)", 3, "wrong number of arguments to 'split': expected 1 or 2, got 3"},
      {"s.replace('a')", 3, "wrong number of arguments to 'replace': expected 2 or 3, got 1"},
      {"s.lastIndexOf('a', 1)", 3, "wrong number of arguments to 'lastIndexOf': expected 1, got 2"},
      {"names.join(',', ',')", 7, "wrong number of arguments to 'join': expected 0 or 1, got 2"},
      {"cronNext('@daily')", 1, "wrong number of arguments to 'cronNext': expected 2, got 1"},
      {"size(s, 1)", 1, "wrong number of arguments to 'size': expected 1, got 2"},
      {"split(s, ',')", 1, "unsupported: 'split' as a global function"},
      {"now.cronNext('@daily')", 5, "unsupported: 'cronNext' as a method"},
      {"paths.backups()", 7, "unsupported: 'backups' as a method"},
      {"s.splits(',')", 3, "unsupported: function 'splits'"},
  });
}

TEST(ExtensionFunctionsProgramTest, ConstantCallsAreFoldedAndOthersReadTheirSlots) {
  Environment env;
  env.Declare("now", 0);
  auto folded = Compile("'a,b'.split(',').join('-') + parseBackupName('Full-00000000-00000001-0').kind", env);
  ASSERT_TRUE(folded.ok()) << folded.error().message;
  ASSERT_TRUE((*folded)->constant().has_value());
  EXPECT_EQ((*folded)->constant()->DebugString(), R"("a-bFull")");

  auto cron = Compile("cronNext('@daily', now)", env);
  ASSERT_TRUE(cron.ok()) << cron.error().message;
  EXPECT_FALSE((*cron)->constant().has_value());
  EXPECT_EQ((*cron)->referenced_slots(), std::vector<int>{0});
  Frame frame((*cron)->frame_size());
  frame[0] = Value::MakeTimestamp(*ParseRfc3339("2024-05-01T10:00:00Z"));
  EXPECT_EQ((*cron)->Evaluate(frame).DebugString(), R"(timestamp("2024-05-02T00:00:00Z"))");
  frame[0] = Value::Int(1);
  EXPECT_EQ((*cron)->Evaluate(frame).DebugString(),
            R"x(error("no matching overload for 'cronNext' applied to (string, int)"))x");
}

TEST_F(ExtensionFunctionsTest, Backups) {
  ExpectCases({
      {"backups(paths).map(b, b.path.substring(18))",
       R"(["v1/Backup-1690000000/Full-00000000-00000500-1690000000", )"
       R"("v1/Backup-1690000000/Incr-00000501-00000600-1690000100.Z", )"
       R"("v2/Full-00000000-00001000-1700000000", )"
       R"("v2/Incr-00001001-00001100-1700000300.gz", )"
       R"("v2/Full-00000000-00001100-1700000350", )"
       R"("v2/Full-00000000-00001100-1700000400.zlib.final", )"
       R"("v2/Full-00000000-00001100-1700000400.zlib.final/2", )"
       R"("v2/Full-00000000-00001100-1700000400.zlib.final/1"])"},
      {"backups(paths)[0]",
       R"({"path": "backups/etcd-main/v1/Backup-1690000000/Full-00000000-00000500-1690000000", )"
       R"("name": "Full-00000000-00000500-1690000000", "kind": "Full", "startRevision": 0, )"
       R"("lastRevision": 500, "createdAt": timestamp("2023-07-22T04:26:40Z"), "compression": "", )"
       R"("final": false, "chunk": false, "layout": "v1"})"},
      {"backups(paths).map(b, [b.kind, b.startRevision, b.compression, b.final, b.chunk, b.layout])",
       R"([["Full", 0, "", false, false, "v1"], ["Incr", 501, "lzw", false, false, "v1"], )"
       R"(["Full", 0, "", false, false, "v2"], ["Incr", 1001, "gzip", false, false, "v2"], )"
       R"(["Full", 0, "", false, false, "v2"], ["Full", 0, "zlib", true, false, "v2"], )"
       R"(["Full", 0, "zlib", true, true, "v2"], ["Full", 0, "zlib", true, true, "v2"]])"},
      {"backups(paths)[7].name", R"("Full-00000000-00001100-1700000400.zlib.final")"},
      {"backups(paths).filter(b, b.kind == 'Full' && !b.chunk).map(b, b.lastRevision).size()", "4"},
      {"backups(['v2/Full-00000000-00000001-1700000000'])[0].layout", R"("v2")"},
      {"backups([])", "[]"},
      {"backups(['x', 'v2/x', 'v2/Full-1-2', 'v1/Backup-x/Full-00000000-00000001-1700000000'])", "[]"},
      {"backups(['v2/Full-00000000-00000001-1700000000', 1])",
       "error: backups: expected a list of strings, element 1 is int"},
      {"backups(s)", "error: no matching overload for 'backups' applied to (string)"},
  });
}

TEST_F(ExtensionFunctionsTest, ParseBackupName) {
  ExpectCases({
      {"parseBackupName('Incr-00001001-00001100-1700000300.gz')",
       R"({"path": "Incr-00001001-00001100-1700000300.gz", "name": "Incr-00001001-00001100-1700000300.gz", )"
       R"("kind": "Incr", "startRevision": 1001, "lastRevision": 1100, )"
       R"("createdAt": timestamp("2023-11-14T22:18:20Z"), "compression": "gzip", "final": false, )"
       R"("chunk": false, "layout": ""})"},
      {"parseBackupName('Full-00000000-00001000-1700000000.final').final", "true"},
      {"parseBackupName('Full-00000000-00001000-1700000000.final').compression", R"("")"},
      {"parseBackupName('Full-00000000-00001000-1700000000.Z.final').compression", R"("lzw")"},
      {"parseBackupName('Full-00000000-00001000-1700000000.zlib').compression", R"("zlib")"},
      {"parseBackupName('Full-1-2-3').lastRevision", "2"},
      {"parseBackupName('Full-00000000-00001000-1700000000.final.gz')", "null"},
      {"parseBackupName('Full-Snapshot-00000000-00001000-1700000000')", "null"},
      {"parseBackupName('Incremental-Snapshot-00001001-00001100-1700000300')", "null"},
      {"parseBackupName('v2/Full-00000000-00001000-1700000000')", "null"},
      {"parseBackupName('full-00000000-00001000-1700000000')", "null"},
      {"parseBackupName('Full-00000000-00001000-17000x0000')", "null"},
      {"parseBackupName('Full-00000000-00001000-1700000000-1')", "null"},
      {"parseBackupName('Full-+0000000-00001000-1700000000')", "null"},
      {"parseBackupName('Incr-00000002-00000001-1700000000')", "null"},
      {"parseBackupName('Full-00000000-00001000-99999999999999999999')", "null"},
      {"parseBackupName('Full-00000000-00001000-')", "null"},
      {"parseBackupName('')", "null"},
      {"parseBackupName(s) == null", "true"},
      {"parseBackupName(x)", "error: no matching overload for 'parseBackupName' applied to (int)"},
  });
}

// Every minute from `after` on, the first one whose UTC calendar fields satisfy `matches`.
Timestamp ReferenceNext(Timestamp after, const std::function<bool(const std::tm&)>& matches) {
  int64_t minute = after.seconds / 60 + 1;  // `after` is positive here
  for (;; ++minute) {
    const std::time_t seconds = minute * 60;
    std::tm fields{};
    gmtime_r(&seconds, &fields);
    if (matches(fields)) return Timestamp{minute * 60};
  }
}

TEST(CronScheduleTest, NextAgreesWithAMinuteByMinuteSearch) {
  struct Schedule {
    const char* text;
    std::function<bool(const std::tm&)> matches;
  };
  const std::vector<Schedule> schedules = {
      {"*/15 9-17 * * MON-FRI",
       [](const std::tm& t) {
         return t.tm_min % 15 == 0 && t.tm_hour >= 9 && t.tm_hour <= 17 && t.tm_wday >= 1 && t.tm_wday <= 5;
       }},
      {"0 0 1,15 * SUN",
       [](const std::tm& t) {
         return t.tm_min == 0 && t.tm_hour == 0 && (t.tm_mday == 1 || t.tm_mday == 15 || t.tm_wday == 0);
       }},
      {"30 23 31 * *", [](const std::tm& t) { return t.tm_min == 30 && t.tm_hour == 23 && t.tm_mday == 31; }},
      {"59 23 * FEB,dec 6-7",
       [](const std::tm& t) {
         return t.tm_min == 59 && t.tm_hour == 23 && (t.tm_mon == 1 || t.tm_mon == 11) &&
                (t.tm_wday == 6 || t.tm_wday == 0);
       }},
      {"7 */5 */10 * *",
       [](const std::tm& t) { return t.tm_min == 7 && t.tm_hour % 5 == 0 && (t.tm_mday - 1) % 10 == 0; }},
      {"@weekly", [](const std::tm& t) { return t.tm_min == 0 && t.tm_hour == 0 && t.tm_wday == 0; }},
  };
  std::vector<Timestamp> starts;
  for (const char* text : {"2024-01-31T23:59:00Z", "2024-02-28T23:45:10Z", "2024-02-29T23:59:59.999Z",
                           "2023-12-31T23:30:00Z", "2025-06-15T12:07:00Z", "2024-11-30T23:59:30Z"}) {
    starts.push_back(*ParseRfc3339(text));
  }
  for (const Schedule& schedule : schedules) {
    auto parsed = CronSchedule::Parse(schedule.text);
    ASSERT_TRUE(parsed.ok()) << schedule.text << ": " << parsed.error().message;
    for (const Timestamp start : starts) {
      Timestamp after = start;
      for (int step = 0; step < 5; ++step) {  // five consecutive activations
        auto next = parsed->Next(after);
        ASSERT_TRUE(next.ok()) << schedule.text << ": " << next.error().message;
        const Timestamp expected = ReferenceNext(after, schedule.matches);
        ASSERT_EQ(FormatRfc3339(*next), FormatRfc3339(expected))
            << schedule.text << " after " << FormatRfc3339(after);
        after = *next;
      }
    }
  }
}

}  // namespace
}  // namespace ruleplane::expr
