#include "engine/common/json_value.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace ruleplane {
namespace {

TEST(JsonValueTest, ParsesEveryJsonKind) {
  Result<Value> value = ParseJson(R"({"n": null, "b": true, "i": -3, "big": 18446744073709551615,
                                      "d": 1.5, "whole": 2.0, "s": "x\u00e9", "l": [1, [2]], "o": {"k": {}}})");
  ASSERT_TRUE(value.ok()) << value.error().message;
  EXPECT_EQ(
      value->DebugString(),
      "{\"n\": null, \"b\": true, \"i\": -3, \"big\": 18446744073709551616.0, \"d\": 1.5, \"whole\": 2.0, "
      "\"s\": \"x\xC3\xA9\", \"l\": [1, [2]], \"o\": {\"k\": {}}}");
  EXPECT_TRUE(value->Find("i")->is_int());
  EXPECT_TRUE(value->Find("whole")->is_double());
  EXPECT_TRUE(value->Find("big")->is_double());
}

TEST(JsonValueTest, KeepsKeyOrder) {
  Result<Value> value = ParseJson(R"({"zeta": 1, "alpha": 2, "mid": 3})");
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(value->map_value()[0].first.string_value(), "zeta");
  EXPECT_EQ(FormatJson(*value), R"({"zeta":1,"alpha":2,"mid":3})");
}

TEST(JsonValueTest, BadJsonNamesLineColumnAndByte) {
  Result<Value> value = ParseJson("{\"a\": [1, 2,]}");
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.error().code, ErrorCode::kParse);
  EXPECT_NE(value.error().message.find("at line 1, column 13 (byte 13): syntax error"), std::string::npos)
      << value.error().message;
  EXPECT_FALSE(ParseJson("").ok());
  Result<Value> trailing = ParseJson("{}\n trailing");
  ASSERT_FALSE(trailing.ok());
  EXPECT_NE(trailing.error().message.find("at line 2, column 4 (byte 7)"), std::string::npos)
      << trailing.error().message;
}

TEST(JsonValueTest, NulByteIsAnErrorNotTheEnd) {
  // nlohmann's lexer would stop at the NUL and accept the first document.
  Result<Value> value = ParseJson(std::string("{\"a\": 1}\n\0{\"b\": 2}", 17));
  ASSERT_FALSE(value.ok());
  EXPECT_NE(value.error().message.find("at line 2, column 1 (byte 10): a NUL byte"), std::string::npos)
      << value.error().message;
  EXPECT_EQ(value.error().position.line, 2);
}

TEST(JsonValueTest, NumberOutOfRangeHasAPosition) {
  Result<Value> value = ParseJson("{\n  \"replicas\": 1e400}");
  ASSERT_FALSE(value.ok());
  EXPECT_NE(value.error().message.find("at line 2, column 19 (byte 21): number overflow parsing '1e400'"),
            std::string::npos)
      << value.error().message;
}

TEST(JsonValueTest, RefusesVeryDeepNesting) {
  EXPECT_TRUE(ParseJson(std::string(500, '[') + std::string(500, ']')).ok());
  Result<Value> deep = ParseJson(std::string(100000, '[') + std::string(100000, ']'));
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.error().message.find("nested deeper than 512"), std::string::npos) << deep.error().message;
}

TEST(JsonValueTest, NestingUpTo512LevelsIsAccepted) {
  // The root is level 0: 512 arrays hold a value at level 512, 513 one at level 513.
  EXPECT_TRUE(ParseJson(std::string(512, '[') + "1" + std::string(512, ']')).ok());
  EXPECT_FALSE(ParseJson(std::string(513, '[') + "1" + std::string(513, ']')).ok());
}

// As nlohmann's own parser: the last value wins, at the place of the first.
TEST(JsonValueTest, DuplicateKeysKeepTheLastValueAtTheFirstPlace) {
  Result<Value> small = ParseJson(R"({"a": 1, "b": 2, "a": 3, "ab": 4, "ba": 5})");
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(FormatJson(*small), R"({"a":3,"b":2,"ab":4,"ba":5})");

  // Objects of many keys index them; the duplicates come before and after that point.
  std::string text = "{";
  std::string expected = "{";
  for (int i = 0; i < 100; ++i) {
    text += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ", ";
    expected += "\"k" + std::to_string(i) + "\":" +
                std::to_string(i == 3    ? -1
                               : i == 90 ? -2
                                         : i) +
                (i < 99 ? "," : "}");
  }
  text += R"("k3": -1, "k90": -2})";
  Result<Value> large = ParseJson(text);
  ASSERT_TRUE(large.ok());
  EXPECT_EQ(FormatJson(*large), expected);
  EXPECT_EQ(large->map_value().size(), 100u);
}

TEST(JsonValueTest, ConvertsValuesBackToJson) {
  const Value value = Value::MakeMap({
      {Value::String("when"), Value::MakeTimestamp({1714557600, 500000000})},
      {Value::String("grace"), Value::MakeDuration({300LL * 1000000000})},
      {Value::Int(7), Value::Double(0.25)},
      {Value::Bool(true), Value::MakeList({Value(), Value::Double(1.0 / 0.0), Value::Double(-1.0 / 0.0),
                                           Value::Double(std::nan(""))})},
      {Value::String("oops"), Value::Error("no such key: x")},
  });
  EXPECT_EQ(
      FormatJson(value),
      R"({"when":"2024-05-01T10:00:00.5Z","grace":"300s","7":0.25,"true":[null,"Infinity","-Infinity","NaN"],)"
      R"("oops":{"error":"no such key: x"}})");
  const nlohmann::json json = ValueToJson(value);
  EXPECT_EQ(json["grace"], "300s");
  EXPECT_EQ(json["7"], 0.25);
}

TEST(JsonValueTest, PrettyPrintsWithAnIndent) {
  const Value value = Value::MakeMap({{Value::String("a"), Value::MakeList({Value::Int(1)})}});
  EXPECT_EQ(FormatJson(value, 2), "{\n  \"a\": [\n    1\n  ]\n}");
  EXPECT_EQ(FormatJson(Value::String("bad \xff utf-8")), "\"bad \xEF\xBF\xBD utf-8\"");
}

TEST(JsonValueTest, RoundTripsThroughNlohmann) {
  const nlohmann::json json = nlohmann::json::parse(R"({"a": [1, 2.5, "x", false, null], "b": {"c": -1}})");
  EXPECT_EQ(ValueToJson(ValueFromJson(json)), json);
  const nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(R"({"z": 1, "a": 2})");
  EXPECT_EQ(ValueToOrderedJson(ValueFromJson(ordered)).dump(), R"({"z":1,"a":2})");
}

}  // namespace
}  // namespace ruleplane
