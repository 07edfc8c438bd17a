// ColumnIndex: for one column of a decision table (one fact), the set of rules
// that a value of the fact satisfies, as far as the column's literal cells
// (cells whose operands are all constants) decide it. Internal to
// CompiledRuleSet.
//
// The constants of the literal cells cut each ordered kind of value (numbers,
// strings, bools, timestamps, durations) into regions: every constant itself,
// and the open gaps between neighbouring constants. A literal cell has the
// same truth for every value in a region, so the index keeps one bitset per
// region, computed once by testing the cells on a representative value of the
// region. A lookup is a binary search among the constants.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/common/value.h"
#include "engine/match/cell_predicate.h"

namespace ruleplane {

class ColumnIndex {
 public:
  // `cells`: the literal cells of this column, of any rule; `rule_count`:
  // rules in the table (rules without a literal cell here are in every bitset).
  ColumnIndex(int fact_slot, const std::vector<const CellPredicate*>& cells, int rule_count);
  // Movable only: region_bits_ points into bitsets_.
  ColumnIndex(ColumnIndex&&) = default;
  ColumnIndex& operator=(ColumnIndex&&) = default;
  ColumnIndex(const ColumnIndex&) = delete;
  ColumnIndex& operator=(const ColumnIndex&) = delete;

  int fact_slot() const { return fact_slot_; }

  // The rules whose literal cells in this column `value` satisfies, as
  // bitset::WordCount(rule_count) words; or nullptr when the index cannot
  // answer: the value is null, a list, a map, NaN or an error, or one of the
  // cells evaluates to an error for it. The caller then tests the cells itself.
  const uint64_t* Lookup(const Value& value) const {
    if (value.is_int() && !dense_.empty()) {
      // Ints below the table are in the gap below every breakpoint, as its
      // first entry is; above it, in the gap above, as its last entry is.
      const int64_t v = value.int_value();
      const int64_t entry =
          v <= dense_low_ ? 0 : (v >= dense_high_ ? dense_high_ - dense_low_ : v - dense_low_);
      return &dense_[entry * words_];
    }
    if (value.is_int() && tables_[kNumber].all_int) return LookupInt(value.int_value());
    if (value.is_bool()) return region_bits_[tables_[kBool].first_region + (value.bool_value() ? 3 : 1)];
    return LookupOther(value);
  }

 private:
  enum Family { kNumber, kString, kBool, kTimestamp, kDuration, kFamilyCount };

  struct Table {
    std::vector<Value> breakpoints;                    // sorted, distinct
    std::vector<int64_t> int_breakpoints;              // the same, when every one is an int
    std::vector<std::string_view> string_breakpoints;  // the same, for strings (views into breakpoints)
    bool all_int = false;
    int first_region = 0;  // regions: gap, breakpoint 0, gap, ..., breakpoint k-1, gap
  };

  // The region of an int among int breakpoints: without branches on the
  // value for the few breakpoints columns usually have.
  const uint64_t* LookupInt(int64_t value) const {
    const Table& table = tables_[kNumber];
    const int64_t* points = table.int_breakpoints.data();
    const int count = static_cast<int>(table.int_breakpoints.size());
    if (count > 8) return LookupOther(Value::Int(value));
    int less = 0, equal = 0;
    for (int i = 0; i < count; ++i) {
      less += points[i] < value;
      equal |= points[i] == value;
    }
    return region_bits_[table.first_region + 2 * less + equal];
  }
  const uint64_t* LookupOther(const Value& value) const;
  void BuildDenseInts();

  static int FamilyOf(const Value& value);  // -1 when not ordered (or NaN)
  static int Region(const Table& table, const Value& value);

  int fact_slot_;
  int words_;
  Table tables_[kFamilyCount];
  std::vector<uint64_t> bitsets_;             // region r at [r * words_, (r + 1) * words_)
  std::vector<const uint64_t*> region_bits_;  // per region: its bitset, or nullptr when unusable
  // The bitsets of every int in [dense_low_, dense_high_], one after the
  // other, when the int breakpoints lie close together and every region is usable.
  std::vector<uint64_t> dense_;
  int64_t dense_low_ = 0;
  int64_t dense_high_ = 0;
};

}  // namespace ruleplane
