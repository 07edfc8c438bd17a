#include "engine/match/column_index.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "engine/common/bitset.h"
#include "engine/common/time_util.h"

namespace ruleplane {
namespace {

double ToDouble(const Value& v) { return v.is_int() ? static_cast<double>(v.int_value()) : v.double_value(); }

// Nanoseconds since the epoch of a timestamp, or of a duration.
__int128 Nanos(const Value& v) {
  if (v.kind() != Value::Kind::kTimestamp) return v.duration_value().nanos;
  const Timestamp t = v.timestamp_value();
  return static_cast<__int128>(t.seconds) * 1000000000 + t.nanos;
}

// The value of `like`'s kind `nanos` after the epoch (or zero), when its kind
// can hold it.
std::optional<Value> WithNanos(const Value& like, __int128 nanos) {
  if (like.kind() == Value::Kind::kTimestamp) {
    const __int128 seconds = nanos / 1000000000 - (nanos % 1000000000 < 0);
    if (seconds < kMinTimestampSeconds || seconds > kMaxTimestampSeconds) return std::nullopt;
    return Value::MakeTimestamp(
        Timestamp{static_cast<int64_t>(seconds), static_cast<int32_t>(nanos - seconds * 1000000000)});
  }
  if (nanos < std::numeric_limits<int64_t>::min() || nanos > std::numeric_limits<int64_t>::max()) {
    return std::nullopt;
  }
  return Value::MakeDuration(Duration{static_cast<int64_t>(nanos)});
}

// Some value strictly between `low` and `high` (nullptr: unbounded) of the
// family of `like`, or nullopt when there is none. The caller re-checks
// strictness, so an approximation (a rounded double midpoint) is harmless.
std::optional<Value> Between(const Value& like, const Value* low, const Value* high) {
  switch (like.kind()) {
    case Value::Kind::kInt:
    case Value::Kind::kDouble: {
      if (low == nullptr && high == nullptr) return Value::Int(0);
      if (low == nullptr) return Value::Double(-std::numeric_limits<double>::infinity());
      if (high == nullptr) return Value::Double(std::numeric_limits<double>::infinity());
      if (low->is_int() && high->is_int()) {
        const __int128 width = static_cast<__int128>(high->int_value()) - low->int_value();
        if (width >= 2) return Value::Int(low->int_value() + static_cast<int64_t>(width / 2));
      }
      return Value::Double(ToDouble(*low) / 2 + ToDouble(*high) / 2);
    }
    case Value::Kind::kString:
      if (low == nullptr) return Value::String("");
      return Value::String(low->string_value() + '\0');
    case Value::Kind::kTimestamp:
    case Value::Kind::kDuration: {
      if (low == nullptr && high == nullptr) return WithNanos(like, 0);
      if (low == nullptr) return WithNanos(like, Nanos(*high) - 1);
      if (high == nullptr) return WithNanos(like, Nanos(*low) + 1);
      const __int128 width = Nanos(*high) - Nanos(*low);
      if (width < 2) return std::nullopt;
      return WithNanos(like, Nanos(*low) + width / 2);
    }
    default:
      return std::nullopt;
  }
}

void CollectConstants(const CellPredicate& predicate, std::vector<Value>& out) {
  const Cell& cell = predicate.cell();
  auto add = [&](const std::optional<Expression>& expression) {
    if (!expression || !expression->program || !expression->program->constant()) return;
    const Value& constant = *expression->program->constant();
    if (cell.kind == Cell::Kind::kIn && constant.is_list()) {
      for (const Value& item : constant.list_value()) out.push_back(item);
    } else if (cell.kind == Cell::Kind::kIn && constant.is_map()) {
      for (const auto& entry : constant.map_value()) out.push_back(entry.first);
    } else {
      out.push_back(constant);
    }
  };
  switch (cell.kind) {
    case Cell::Kind::kCompare:
    case Cell::Kind::kIn:
      add(cell.operand);
      break;
    case Cell::Kind::kRange:
      add(cell.low);
      add(cell.high);
      break;
    default:
      break;
  }
}

}  // namespace

int ColumnIndex::FamilyOf(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kInt:
      return kNumber;
    case Value::Kind::kDouble:
      return std::isnan(value.double_value()) ? -1 : kNumber;
    case Value::Kind::kString:
      return kString;
    case Value::Kind::kBool:
      return kBool;
    case Value::Kind::kTimestamp:
      return kTimestamp;
    case Value::Kind::kDuration:
      return kDuration;
    default:
      return -1;
  }
}

ColumnIndex::ColumnIndex(int fact_slot, const std::vector<const CellPredicate*>& cells, int rule_count)
    : fact_slot_(fact_slot), words_(bitset::WordCount(rule_count)) {
  std::vector<Value> constants;
  for (const CellPredicate* cell : cells) CollectConstants(*cell, constants);
  for (const Value& constant : constants) {
    const int family = FamilyOf(constant);
    if (family >= 0 && family != kBool) tables_[family].breakpoints.push_back(constant);
  }
  tables_[kBool].breakpoints = {Value::Bool(false), Value::Bool(true)};

  auto less = [](const Value& a, const Value& b) { return Value::Compare(a, b) < 0; };
  auto same = [](const Value& a, const Value& b) { return Value::Compare(a, b) == 0; };
  int regions = 0;
  for (Table& table : tables_) {
    std::sort(table.breakpoints.begin(), table.breakpoints.end(), less);
    table.breakpoints.erase(std::unique(table.breakpoints.begin(), table.breakpoints.end(), same),
                            table.breakpoints.end());
    table.all_int = std::all_of(table.breakpoints.begin(), table.breakpoints.end(),
                                [](const Value& v) { return v.is_int(); });
    if (table.all_int) {
      for (const Value& v : table.breakpoints) table.int_breakpoints.push_back(v.int_value());
    }
    if (&table == &tables_[kString]) {
      for (const Value& v : table.breakpoints) table.string_breakpoints.push_back(v.string_value());
    }
    table.first_region = regions;
    regions += 2 * static_cast<int>(table.breakpoints.size()) + 1;
  }

  bitsets_.assign(static_cast<size_t>(regions) * words_, 0);
  std::vector<uint8_t> usable_regions(regions, 0);
  const Value exemplars[kFamilyCount] = {Value::Int(0), Value::String(""), Value::Bool(false),
                                         Value::MakeTimestamp(Timestamp{}), Value::MakeDuration(Duration{})};
  expr::Frame no_frame;
  for (int family = 0; family < kFamilyCount; ++family) {
    const Table& table = tables_[family];
    const std::vector<Value>& points = table.breakpoints;
    const int count = static_cast<int>(points.size());
    for (int region = 0; region < 2 * count + 1; ++region) {
      std::optional<Value> representative;
      if (region % 2 == 1) {
        representative = points[region / 2];
      } else {
        const int above = region / 2;
        const Value* low = above > 0 ? &points[above - 1] : nullptr;
        const Value* high = above < count ? &points[above] : nullptr;
        representative = Between(exemplars[family], low, high);
        if (representative && ((low != nullptr && Value::Compare(*low, *representative) >= 0) ||
                               (high != nullptr && Value::Compare(*representative, *high) >= 0))) {
          representative.reset();  // an empty gap: no value ever lands here
        }
      }
      if (!representative) continue;
      const int global = table.first_region + region;
      uint64_t* bits = &bitsets_[static_cast<size_t>(global) * words_];
      bitset::SetFirst(bits, words_, rule_count);
      bool usable = true;
      for (const CellPredicate* cell : cells) {
        const Value passed = cell->Test(*representative, no_frame);
        if (!passed.is_bool()) {
          usable = false;
          break;
        }
        if (!passed.bool_value()) bitset::Clear(bits, cell->rule());
      }
      usable_regions[global] = usable;
    }
  }
  for (int region = 0; region < regions; ++region) {
    region_bits_.push_back(usable_regions[region] ? &bitsets_[static_cast<size_t>(region) * words_]
                                                  : nullptr);
  }
  BuildDenseInts();
}

void ColumnIndex::BuildDenseInts() {
  constexpr int64_t kMaxEntries = 64;
  const Table& table = tables_[kNumber];
  if (!table.all_int) return;
  const std::vector<int64_t>& points = table.int_breakpoints;
  int64_t low = 0, high = 0;  // with no breakpoint, every int is in one region
  if (!points.empty()) {
    if (points.front() == std::numeric_limits<int64_t>::min() ||
        points.back() == std::numeric_limits<int64_t>::max() ||
        static_cast<__int128>(points.back()) - points.front() > kMaxEntries) {
      return;
    }
    low = points.front() - 1;
    high = points.back() + 1;
  }
  std::vector<uint64_t> dense;
  for (int64_t v = low; v <= high; ++v) {
    const uint64_t* bits = region_bits_[table.first_region + Region(table, Value::Int(v))];
    if (bits == nullptr) return;
    dense.insert(dense.end(), bits, bits + words_);
  }
  dense_ = std::move(dense);
  dense_low_ = low;
  dense_high_ = high;
}

int ColumnIndex::Region(const Table& table, const Value& value) {
  const auto& points = table.breakpoints;
  const auto it = std::lower_bound(points.begin(), points.end(), value,
                                   [](const Value& a, const Value& b) { return Value::Compare(a, b) < 0; });
  const int i = static_cast<int>(it - points.begin());
  return (it != points.end() && Value::Compare(*it, value) == 0) ? 2 * i + 1 : 2 * i;
}

// Everything but ints among int breakpoints and bools (see Lookup).
const uint64_t* ColumnIndex::LookupOther(const Value& value) const {
  if (value.is_string()) {
    // Values usually equal one of the few constants, and most constants
    // differ in length: look for an equal one first, then for the gap.
    const Table& table = tables_[kString];
    const std::string_view v = value.string_value();
    const auto& points = table.string_breakpoints;
    for (size_t i = 0; i < points.size(); ++i) {
      if (points[i] == v) return region_bits_[table.first_region + 2 * static_cast<int>(i) + 1];
    }
    const auto gap = std::lower_bound(points.begin(), points.end(), v) - points.begin();
    return region_bits_[table.first_region + 2 * static_cast<int>(gap)];
  }
  const int family = FamilyOf(value);
  if (family < 0) return nullptr;
  return region_bits_[tables_[family].first_region + Region(tables_[family], value)];
}

}  // namespace ruleplane
