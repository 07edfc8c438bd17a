#include "engine/common/time_util.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace ruleplane {
namespace {

constexpr int64_t kSecond = 1000000000;

TEST(TimeUtilTest, ParsesRfc3339) {
  const std::vector<std::pair<std::string, Timestamp>> cases = {
      {"1970-01-01T00:00:00Z", {0, 0}},
      {"2024-05-01T10:00:00Z", {1714557600, 0}},
      {"2024-05-01t10:00:00z", {1714557600, 0}},
      {"2024-05-01T12:00:00+02:00", {1714557600, 0}},
      {"2024-05-01T09:30:00-00:30", {1714557600, 0}},
      {"2024-05-01T10:00:00.5Z", {1714557600, 500000000}},
      {"2024-05-01T10:00:00.123456789123Z", {1714557600, 123456789}},
      {"2024-02-29T00:00:00Z", {1709164800, 0}},
      {"1969-12-31T23:59:59.999999999Z", {-1, 999999999}},
      {"2262-04-11T23:47:16.854775807Z", Timestamp::FromUnixNanos(std::numeric_limits<int64_t>::max())},
      {"0001-01-01T00:00:00Z", {kMinTimestampSeconds, 0}},
      {"0001-01-01T00:30:00+00:30", {kMinTimestampSeconds, 0}},
      {"9999-12-31T23:59:59.999999999Z", {kMaxTimestampSeconds, 999999999}},
      {"1600-01-01T00:00:00Z", {-11676096000, 0}},
  };
  for (const auto& [text, expected] : cases) {
    Result<Timestamp> t = ParseRfc3339(text);
    ASSERT_TRUE(t.ok()) << text << ": " << t.error().message;
    EXPECT_EQ(t->seconds, expected.seconds) << text;
    EXPECT_EQ(t->nanos, expected.nanos) << text;
  }
}

TEST(TimeUtilTest, RejectsInvalidTimestamps) {
  for (const char* text :
       {"", "2024-05-01", "2024-05-01T10:00:00", "2024-05-01 10:00:00Z", "2024-5-01T10:00:00Z",
        "2023-02-29T00:00:00Z", "2024-04-31T00:00:00Z", "2024-05-01T24:00:00Z", "2024-05-01T10:60:00Z",
        "2024-05-01T10:00:60Z", "2024-05-01T10:00:00.Z", "2024-05-01T10:00:00+0200",
        "2024-05-01T10:00:00Zjunk", "0000-01-01T00:00:00Z", "10000-01-01T00:00:00Z",
        "0001-01-01T00:00:00+00:01", "9999-12-31T23:59:59-00:01"}) {
    Result<Timestamp> t = ParseRfc3339(text);
    ASSERT_FALSE(t.ok()) << text;
    EXPECT_EQ(t.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(t.error().message.find("invalid timestamp"), std::string::npos) << t.error().message;
  }
}

TEST(TimeUtilTest, FormatsRfc3339InUtc) {
  EXPECT_EQ(FormatRfc3339(Timestamp{0}), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatRfc3339(Timestamp{1714557600}), "2024-05-01T10:00:00Z");
  EXPECT_EQ(FormatRfc3339(Timestamp{1714557600, 250000000}), "2024-05-01T10:00:00.25Z");
  EXPECT_EQ(FormatRfc3339(Timestamp::FromUnixNanos(-1)), "1969-12-31T23:59:59.999999999Z");
  EXPECT_EQ(FormatRfc3339(Timestamp::FromUnixNanos(std::numeric_limits<int64_t>::min())),
            "1677-09-21T00:12:43.145224192Z");
  for (const char* text :
       {"2000-02-29T23:59:59.000000001Z", "1900-03-01T00:00:00Z", "2100-12-31T12:34:56.7Z",
        "0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z", "0400-02-29T12:00:00Z"}) {
    EXPECT_EQ(FormatRfc3339(*ParseRfc3339(text)), text);
  }
}

TEST(TimeUtilTest, ParsesGoDurations) {
  const std::vector<std::pair<std::string, int64_t>> cases = {
      {"0", 0},
      {"0s", 0},
      {"5m", 300 * kSecond},
      {"1h30m", 5400 * kSecond},
      {"1h30m5s", 5405 * kSecond},
      {"1.5s", 1500000000},
      {".5s", 500000000},
      {"1.s", kSecond},
      {"-1.5h", -5400 * kSecond},
      {"+10s", 10 * kSecond},
      {"100ms", 100000000},
      {"3us", 3000},
      {"3\xC2\xB5s", 3000},
      {"7ns", 7},
      {"1m0.000000001s", 60 * kSecond + 1},
      {"2562047h47m16.854775807s", std::numeric_limits<int64_t>::max()},
      {"-2562047h47m16.854775808s", std::numeric_limits<int64_t>::min()},
  };
  for (const auto& [text, nanos] : cases) {
    Result<Duration> d = ParseDuration(text);
    ASSERT_TRUE(d.ok()) << text << ": " << d.error().message;
    EXPECT_EQ(d->nanos, nanos) << text;
  }
}

TEST(TimeUtilTest, RejectsInvalidDurations) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "expected a number and a unit"},
      {"-", "expected a number and a unit"},
      {"5", "missing unit"},
      {"1h5", "missing unit"},
      {"5 m", "unknown unit ' m'"},
      {"5d", "unknown unit 'd'"},
      {".s", "expected a number and a unit"},
      {"2562047h47m16.854775808s", "out of range"},
      {"9999999999999999999s", "out of range"},
  };
  for (const auto& [text, message] : cases) {
    Result<Duration> d = ParseDuration(text);
    ASSERT_FALSE(d.ok()) << text;
    EXPECT_NE(d.error().message.find(message), std::string::npos) << text << ": " << d.error().message;
  }
}

TEST(TimeUtilTest, FormatsDurationsInCelForm) {
  EXPECT_EQ(FormatDuration(Duration{0}), "0s");
  EXPECT_EQ(FormatDuration(Duration{300 * kSecond}), "300s");
  EXPECT_EQ(FormatDuration(Duration{1500000000}), "1.5s");
  EXPECT_EQ(FormatDuration(Duration{-1}), "-0.000000001s");
  EXPECT_EQ(FormatDuration(Duration{std::numeric_limits<int64_t>::min()}), "-9223372036.854775808s");
}

TEST(TimeUtilTest, TimestampArithmeticStaysInCelsRange) {
  const Timestamp first = *ParseRfc3339("0001-01-01T00:00:00Z");
  const Timestamp last = *ParseRfc3339("9999-12-31T23:59:59.999999999Z");
  EXPECT_EQ(FormatRfc3339(*AddDuration(first, Duration{1})), "0001-01-01T00:00:00.000000001Z");
  EXPECT_EQ(FormatRfc3339(*SubtractDuration(last, Duration{999999999})), "9999-12-31T23:59:59Z");
  EXPECT_EQ(*AddDuration(*ParseRfc3339("0001-01-01T00:00:01.000000001Z"), Duration{-999999999}),
            *ParseRfc3339("0001-01-01T00:00:00.000000002Z"));
  for (const Result<Timestamp>& outside :
       {AddDuration(first, Duration{-1}), AddDuration(last, Duration{1}),
        SubtractDuration(first, Duration{1}), TimestampFromUnixSeconds(kMinTimestampSeconds - 1),
        TimestampFromUnixSeconds(kMaxTimestampSeconds + 1)}) {
    ASSERT_FALSE(outside.ok());
    EXPECT_EQ(outside.error().message, "timestamp out of range (years 1 to 9999)");
  }
  EXPECT_EQ(TimestampFromUnixSeconds(kMaxTimestampSeconds)->seconds, kMaxTimestampSeconds);
  EXPECT_EQ(
      TimeBetween(*ParseRfc3339("2024-05-01T10:00:00Z"), *ParseRfc3339("2024-05-01T09:55:00.5Z"))->nanos,
      299500000000);
  // About 292 years fit in a Duration; 9998 years do not.
  EXPECT_FALSE(TimeBetween(last, first).ok());
  EXPECT_TRUE(TimeBetween(*ParseRfc3339("2262-01-01T00:00:00Z"), *ParseRfc3339("1970-01-01T00:00:00Z")).ok());
}

}  // namespace
}  // namespace ruleplane
