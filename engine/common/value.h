// Value: the dynamically typed value that expressions compute with, facts hold
// and snapshots are made of. Mirrors CEL's value kinds (without uint and bytes).
//
// Values are immutable and cheap to copy: strings, lists and maps are shared.
// An evaluation error is itself a Value (kind kError), so that && and || can
// absorb errors as CEL specifies.
//
//   Value v = Value::Map({{Value::String("replicas"), Value::Int(3)}});
//   const Value* r = v.Find("replicas");   // r->int_value() == 3
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace ruleplane {

// Seconds since the Unix epoch, UTC, and the nanoseconds into that second
// (0 <= nanos < 1e9), as protobuf's Timestamp: CEL's range, the years 1 to
// 9999, does not fit in an int64 of nanoseconds. time_util.h checks the range.
struct Timestamp {
  int64_t seconds = 0;
  int32_t nanos = 0;

  // `nanos` nanoseconds after the epoch (before it when negative).
  static constexpr Timestamp FromUnixNanos(int64_t nanos) {
    constexpr int64_t kNanosPerSecond = 1000000000;
    const int64_t rest = nanos % kNanosPerSecond;
    return rest < 0 ? Timestamp{nanos / kNanosPerSecond - 1, static_cast<int32_t>(rest + kNanosPerSecond)}
                    : Timestamp{nanos / kNanosPerSecond, static_cast<int32_t>(rest)};
  }
  friend bool operator==(Timestamp, Timestamp) = default;
  friend auto operator<=>(Timestamp, Timestamp) = default;
};

struct Duration {
  int64_t nanos = 0;
  friend bool operator==(Duration, Duration) = default;
  friend auto operator<=>(Duration, Duration) = default;
};

class Value {
 public:
  enum class Kind : uint8_t {
    kNull,
    kBool,
    kInt,
    kDouble,
    kString,
    kList,
    kMap,
    kTimestamp,
    kDuration,
    kError,
  };
  using List = std::vector<Value>;
  // Entries in insertion order (JSON key order is kept for output).
  using Map = std::vector<std::pair<Value, Value>>;

  Value() = default;  // null
  static Value Null() { return Value(); }
  static Value Bool(bool b) { return Value(Kind::kBool, b); }
  static Value Int(int64_t i) { return Value(Kind::kInt, i); }
  static Value Double(double d) { return Value(Kind::kDouble, d); }
  static Value String(std::string s) {
    return Value(Kind::kString, std::make_shared<const std::string>(std::move(s)));
  }
  static Value MakeList(List items) {
    return Value(Kind::kList, std::make_shared<const List>(std::move(items)));
  }
  static Value MakeMap(Map entries) {
    return Value(Kind::kMap, std::make_shared<const Map>(std::move(entries)));
  }
  static Value MakeTimestamp(Timestamp t) { return Value(Kind::kTimestamp, t); }
  static Value MakeDuration(Duration d) { return Value(Kind::kDuration, d); }
  static Value Error(std::string message) {
    return Value(Kind::kError, std::make_shared<const std::string>(std::move(message)));
  }

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }
  bool is_error() const { return kind_ == Kind::kError; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_double() const { return kind_ == Kind::kDouble; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_map() const { return kind_ == Kind::kMap; }

  // Accessors: precondition, the value has that kind.
  bool bool_value() const { return std::get<bool>(data_); }
  int64_t int_value() const { return std::get<int64_t>(data_); }
  double double_value() const { return std::get<double>(data_); }
  const std::string& string_value() const { return *std::get<StringPtr>(data_); }
  const List& list_value() const { return *std::get<ListPtr>(data_); }
  const Map& map_value() const { return *std::get<MapPtr>(data_); }
  Timestamp timestamp_value() const { return std::get<Timestamp>(data_); }
  Duration duration_value() const { return std::get<Duration>(data_); }
  const std::string& error_message() const { return *std::get<StringPtr>(data_); }

  // Map lookup; nullptr when this is not a map or has no such key.
  const Value* Find(std::string_view key) const;
  const Value* Find(const Value& key) const;
  // Lookup along a path of map keys ({"metadata", "name"}); nullptr when a
  // step is not a map or has no such key.
  const Value* FindPath(std::initializer_list<std::string_view> keys) const;

  // CEL's name of the kind: "null_type", "bool", "int", "double", "string",
  // "list", "map", "google.protobuf.Timestamp", "google.protobuf.Duration", "error".
  const char* TypeName() const;

  // CEL equality: numbers compare across int and double; lists and maps compare
  // element-wise; values of unrelated kinds are unequal (never an error here).
  friend bool operator==(const Value& a, const Value& b);

  // A total order used for sorting and for index keys: by kind first, then
  // value (numbers numerically across int and double).
  static int Compare(const Value& a, const Value& b);

  // Readable rendering in CEL literal syntax: 3, 1.5, "a", [1, 2], {"k": true},
  // timestamp("2024-01-01T00:00:00Z"), duration("300s"), null.
  std::string DebugString() const;

 private:
  using StringPtr = std::shared_ptr<const std::string>;
  using ListPtr = std::shared_ptr<const List>;
  using MapPtr = std::shared_ptr<const Map>;
  using Data =
      std::variant<std::monostate, bool, int64_t, double, StringPtr, ListPtr, MapPtr, Timestamp, Duration>;

  template <typename T>
  Value(Kind kind, T data) : kind_(kind), data_(std::move(data)) {}

  Kind kind_ = Kind::kNull;
  Data data_;
};

// object.FindPath(keys), as a function for the adapters' and tests' field reads.
inline const Value* ValueAt(const Value& object, std::initializer_list<std::string_view> keys) {
  return object.FindPath(keys);
}

}  // namespace ruleplane
