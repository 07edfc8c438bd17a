#include "engine/common/value.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace ruleplane {
namespace {

Value Str(const char* s) { return Value::String(s); }

TEST(ValueTest, KindsAndAccessors) {
  EXPECT_TRUE(Value().is_null());
  EXPECT_EQ(Value::Bool(true).kind(), Value::Kind::kBool);
  EXPECT_EQ(Value::Int(-3).int_value(), -3);
  EXPECT_EQ(Value::Double(1.5).double_value(), 1.5);
  EXPECT_EQ(Str("x").string_value(), "x");
  EXPECT_EQ(Value::MakeList({Value::Int(1)}).list_value().size(), 1u);
  EXPECT_EQ(Value::MakeTimestamp(Timestamp{5, 7}).timestamp_value().seconds, 5);
  EXPECT_EQ(Value::MakeDuration(Duration{-5}).duration_value().nanos, -5);
  EXPECT_EQ(Value::Error("boom").error_message(), "boom");
}

TEST(ValueTest, TypeNamesAreCelNames) {
  const std::vector<std::pair<Value, std::string>> cases = {
      {Value(), "null_type"},
      {Value::Bool(false), "bool"},
      {Value::Int(0), "int"},
      {Value::Double(0), "double"},
      {Str(""), "string"},
      {Value::MakeList({}), "list"},
      {Value::MakeMap({}), "map"},
      {Value::MakeTimestamp({}), "google.protobuf.Timestamp"},
      {Value::MakeDuration({}), "google.protobuf.Duration"},
      {Value::Error("e"), "error"},
  };
  for (const auto& [value, name] : cases) EXPECT_EQ(value.TypeName(), name);
}

TEST(ValueTest, FindLooksUpMapKeys) {
  const Value map = Value::MakeMap({{Str("replicas"), Value::Int(3)}, {Value::Int(1), Str("one")}});
  ASSERT_NE(map.Find("replicas"), nullptr);
  EXPECT_EQ(map.Find("replicas")->int_value(), 3);
  EXPECT_EQ(map.Find("missing"), nullptr);
  ASSERT_NE(map.Find(Value::Int(1)), nullptr);
  EXPECT_EQ(map.Find(Value::Int(1))->string_value(), "one");
  ASSERT_NE(map.Find(Value::Double(1.0)), nullptr);  // numeric keys compare across int and double
  EXPECT_EQ(map.Find(Str("1")), nullptr);
  EXPECT_EQ(Value::Int(1).Find("x"), nullptr);
}

TEST(ValueTest, EqualityFollowsCel) {
  EXPECT_EQ(Value::Int(1), Value::Double(1.0));
  EXPECT_NE(Value::Int(1), Value::Double(1.5));
  EXPECT_NE(Value::Int(std::numeric_limits<int64_t>::max()), Value::Double(9223372036854775808.0));
  EXPECT_NE(Value::Double(std::nan("")), Value::Double(std::nan("")));
  EXPECT_NE(Value::Int(1), Str("1"));
  EXPECT_NE(Value(), Value::Int(0));
  EXPECT_EQ(Value(), Value());
  EXPECT_EQ(Value::MakeList({Value::Int(1), Str("a")}), Value::MakeList({Value::Double(1), Str("a")}));
  EXPECT_NE(Value::MakeList({Value::Int(1)}), Value::MakeList({Value::Int(1), Value::Int(1)}));
  // Maps are equal whatever the insertion order.
  EXPECT_EQ(Value::MakeMap({{Str("a"), Value::Int(1)}, {Str("b"), Value::Int(2)}}),
            Value::MakeMap({{Str("b"), Value::Int(2)}, {Str("a"), Value::Int(1)}}));
  EXPECT_NE(Value::MakeMap({{Str("a"), Value::Int(1)}}), Value::MakeMap({{Str("a"), Value::Int(2)}}));
  EXPECT_NE(Value::MakeMap({{Str("a"), Value::Int(1)}}), Value::MakeMap({{Str("b"), Value::Int(1)}}));
  EXPECT_EQ(Value::MakeTimestamp({7}), Value::MakeTimestamp({7}));
  EXPECT_NE(Value::MakeTimestamp({7}), Value::MakeDuration({7}));
}

TEST(ValueTest, CompareIsATotalOrderConsistentWithEquality) {
  std::vector<Value> values = {
      Value::MakeMap({{Str("b"), Value::Int(1)}}),
      Value::MakeMap({{Str("a"), Value::Int(1)}}),
      Value::MakeList({Value::Int(2)}),
      Value::MakeList({Value::Int(1), Value::Int(5)}),
      Value::MakeDuration({1}),
      Value::MakeTimestamp({0, 1}),
      Str("b"),
      Str("a"),
      Value::Double(std::nan("")),
      Value::Double(2.5),
      Value::Int(2),
      Value::Double(-1e300),
      Value::Int(std::numeric_limits<int64_t>::min()),
      Value::Bool(true),
      Value::Bool(false),
      Value(),
  };
  std::sort(values.begin(), values.end(),
            [](const Value& a, const Value& b) { return Value::Compare(a, b) < 0; });
  std::vector<std::string> sorted;
  for (const Value& v : values) sorted.push_back(v.DebugString());
  EXPECT_EQ(sorted, (std::vector<std::string>{
                        "null", "false", "true", "-1e+300", "-9223372036854775808", "2", "2.5",
                        "double(\"NaN\")", "\"a\"", "\"b\"", "timestamp(\"1970-01-01T00:00:00.000000001Z\")",
                        "duration(\"0.000000001s\")", "[1, 5]", "[2]", "{\"a\": 1}", "{\"b\": 1}"}));
  EXPECT_EQ(Value::Compare(Value::Int(3), Value::Double(3.0)), 0);
  EXPECT_EQ(Value::Compare(Value::Int(3), Value::Double(3.5)), -1);
  EXPECT_EQ(Value::Compare(Value::Double(-3.5), Value::Int(-3)), -1);
  EXPECT_EQ(Value::Compare(Value::MakeMap({{Str("a"), Value::Int(1)}, {Str("b"), Value::Int(2)}}),
                           Value::MakeMap({{Str("b"), Value::Int(2)}, {Str("a"), Value::Int(1)}})),
            0);
}

TEST(ValueTest, DebugStringUsesCelLiteralSyntax) {
  EXPECT_EQ(Value().DebugString(), "null");
  EXPECT_EQ(Value::Int(-3).DebugString(), "-3");
  EXPECT_EQ(Value::Double(3).DebugString(), "3.0");
  EXPECT_EQ(Value::Double(1.5).DebugString(), "1.5");
  EXPECT_EQ(Value::Double(1e21).DebugString(), "1e+21");
  EXPECT_EQ(Str("a\"b\\c\n\x01").DebugString(), R"("a\"b\\c\n\x01")");
  EXPECT_EQ(Value::MakeList({Value::Int(1), Str("x")}).DebugString(), R"([1, "x"])");
  EXPECT_EQ(Value::MakeMap({{Str("k"), Value::Bool(true)}}).DebugString(), R"({"k": true})");
  EXPECT_EQ(Value::MakeTimestamp({1714557600}).DebugString(), R"(timestamp("2024-05-01T10:00:00Z"))");
  EXPECT_EQ(Value::MakeDuration({300LL * 1000000000}).DebugString(), R"(duration("300s"))");
  EXPECT_EQ(Value::Error("boom").DebugString(), R"(error("boom"))");
}

TEST(ValueTest, CopiesShareTheirContents) {
  const Value list = Value::MakeList({Str("a"), Str("b")});
  const Value copy = list;  // NOLINT: the copy is the point
  EXPECT_EQ(&list.list_value(), &copy.list_value());
}

}  // namespace
}  // namespace ruleplane
