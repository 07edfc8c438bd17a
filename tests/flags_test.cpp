// The one flag parser every command uses (cli/flags.h).
#include "cli/flags.h"

#include <gtest/gtest.h>

#include <sstream>

namespace ruleplane::cli {
namespace {

struct Parsed {
  bool ok;
  std::string err;
};

Parsed Parse(Flags& flags, const Args& args) {
  std::ostringstream err;
  const bool ok = flags.Parse(args, err, "usage: test\n");
  return {ok, err.str()};
}

TEST(Flags, AValueFollowsItsFlagOrAnEqualsSignAndTheLastOneCounts) {
  Flags flags({{"--journal"}, {"--rules"}});
  ASSERT_TRUE(
      Parse(flags, {"--journal", "a.db", "--rules=x.yaml", "--rules", "y.yaml", "--journal=b.db"}).ok);
  EXPECT_EQ(flags.Get("--journal"), "b.db");
  EXPECT_EQ(flags.GetAll("--rules"), (std::vector<std::string>{"x.yaml", "y.yaml"}));
  EXPECT_EQ(flags.Get("--missing", "fallback"), "fallback");
  EXPECT_FALSE(flags.Has("--missing"));
}

TEST(Flags, AShortNameKeepsItsValueUnderTheLongName) {
  Flags flags({{"--input", true, "-i"}});
  ASSERT_TRUE(Parse(flags, {"-i", "in.json"}).ok);
  EXPECT_EQ(flags.Get("--input"), "in.json");
}

TEST(Flags, GetListSplitsCommasAndGetAllDoesNot) {
  Flags flags({{"--endpoints"}, {"--param"}});
  ASSERT_TRUE(
      Parse(flags, {"--endpoints", "http://a:1,http://b:2", "--endpoints=http://c:3", "--param", "x=a,b"})
          .ok);
  EXPECT_EQ(flags.GetList("--endpoints"),
            (std::vector<std::string>{"http://a:1", "http://b:2", "http://c:3"}));
  EXPECT_EQ(flags.GetAll("--param"), (std::vector<std::string>{"x=a,b"}));
}

TEST(Flags, ASwitchTakesNoValue) {
  Flags flags({{"--dry-run", false}});
  ASSERT_TRUE(Parse(flags, {"--dry-run", "positional"}).ok);
  EXPECT_TRUE(flags.Has("--dry-run"));
  EXPECT_EQ(flags.positional(), (std::vector<std::string>{"positional"}));
  Flags again({{"--dry-run", false}});
  const Parsed parsed = Parse(again, {"--dry-run=yes"});
  EXPECT_FALSE(parsed.ok);
  EXPECT_EQ(parsed.err, "ruleplane: --dry-run takes no value\nusage: test\n");
}

TEST(Flags, AnUnknownFlagOrAMissingValueIsNamedWithTheUsage) {
  Flags unknown({{"--journal"}});
  Parsed parsed = Parse(unknown, {"--jornal", "x"});
  EXPECT_FALSE(parsed.ok);
  EXPECT_EQ(
      parsed.err,
      "ruleplane: unknown flag --jornal (an argument that starts with '-' goes after --)\nusage: test\n");
  Flags missing({{"--journal"}});
  parsed = Parse(missing, {"--journal"});
  EXPECT_FALSE(parsed.ok);
  EXPECT_EQ(parsed.err, "ruleplane: --journal needs a value\nusage: test\n");
}

TEST(Flags, DoubleDashEndsTheOptionsAndASingleDashIsPositional) {
  Flags flags({{"--journal"}});
  ASSERT_TRUE(Parse(flags, {"-", "--", "--journal", "-x"}).ok);
  EXPECT_FALSE(flags.Has("--journal"));
  EXPECT_EQ(flags.positional(), (std::vector<std::string>{"-", "--journal", "-x"}));
}

TEST(Flags, AnArgumentThatStartsWithADashIsAnOptionUnlessTheCommandTakesExpressions) {
  Flags strict({});
  EXPECT_FALSE(Parse(strict, {"-status.yaml"}).ok);
  Flags expressions({{"--input", true, "-i"}}, OptionShape::kNameOrLetter);
  ASSERT_TRUE(Parse(expressions, {"-1 + 2", "-a.b", "--input=x.json"}).ok);
  EXPECT_EQ(expressions.positional(), (std::vector<std::string>{"-1 + 2", "-a.b"}));
  Flags letter({}, OptionShape::kNameOrLetter);
  EXPECT_FALSE(Parse(letter, {"-x"}).ok);
}

TEST(Flags, CountsAndPositionalBoundsAreChecked) {
  Flags flags({{"--limit"}});
  ASSERT_TRUE(Parse(flags, {"--limit", "-3", "a", "b"}).ok);
  std::ostringstream err;
  int64_t limit = 7;
  EXPECT_FALSE(flags.GetCount("--limit", limit, err));
  EXPECT_EQ(err.str(), "ruleplane: --limit takes a whole number, got '-3'\n");
  EXPECT_EQ(limit, 7);
  std::ostringstream too_many, too_few;
  EXPECT_TRUE(flags.RequirePositional(2, 2, "two versions", err, ""));
  EXPECT_FALSE(flags.RequirePositional(0, 1, "snapshot", too_many, ""));
  EXPECT_EQ(too_many.str(), "ruleplane: unexpected argument 'b' (quote an argument with spaces in it)\n");
  EXPECT_FALSE(flags.RequirePositional(3, 3, "three files", too_few, ""));
  EXPECT_EQ(too_few.str(), "ruleplane: missing the three files\n");
}

// etcd-backup-restore's flags take Go durations and Go's --flag=true.
TEST(Flags, DurationsParseAsGoWritesThemAndBadOnesNameTheFlag) {
  const std::vector<std::pair<std::string, std::chrono::nanoseconds>> accepted = {
      {"20s", std::chrono::seconds(20)},
      {"1m30s", std::chrono::seconds(90)},
      {"500ms", std::chrono::milliseconds(500)},
      {"1.5h", std::chrono::minutes(90)},
      {"0", std::chrono::nanoseconds(0)}};
  for (const auto& [text, expected] : accepted) {
    Flags flags({{"--period"}});
    ASSERT_TRUE(Parse(flags, {"--period=" + text}).ok);
    std::ostringstream err;
    std::chrono::nanoseconds period{7};
    EXPECT_TRUE(flags.GetDuration("--period", period, err)) << text << ": " << err.str();
    EXPECT_EQ(period, expected) << text;
  }
  for (const std::string text : {"20", "20 s", "1m30", "-1s", "ten seconds", ""}) {
    Flags flags({{"--period"}});
    ASSERT_TRUE(Parse(flags, {"--period", text}).ok);
    std::ostringstream err;
    std::chrono::nanoseconds period{7};
    EXPECT_FALSE(flags.GetDuration("--period", period, err)) << text;
    EXPECT_EQ(period.count(), 7) << text;
    EXPECT_EQ(err.str().rfind("ruleplane: --period", 0), 0u) << err.str();
  }
  Flags flags({{"--compress"}});
  ASSERT_TRUE(Parse(flags, {"--compress=false"}).ok);
  std::ostringstream err;
  bool compress = true;
  EXPECT_TRUE(flags.GetBool("--compress", compress, err));
  EXPECT_FALSE(compress);
  ASSERT_TRUE(Parse(flags, {"--compress=yes"}).ok);
  EXPECT_FALSE(flags.GetBool("--compress", compress, err));
  EXPECT_EQ(err.str(), "ruleplane: --compress takes true or false, got 'yes'\n");
}

}  // namespace
}  // namespace ruleplane::cli
