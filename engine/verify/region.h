// Region: a box of fact vectors, the summary `verify` and `diff` print
// instead of millions of states. Per fact (an axis), either any value or a
// set of values; a state is in the region when each of its facts is in its
// axis (and the state is in the domain: within its bounds, satisfying the
// constraints).
//
//   n=3, ready=1, f in [1..2]          (facts not shown: any value)
//
// Regions come out of the enumeration as small disjoint boxes; MergeRegions
// greedily joins boxes that differ in one axis only, so that findings read as
// a few regions. Each region keeps the number of states it holds and one
// concrete example state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/common/value.h"

namespace ruleplane {

struct RegionAxis {
  bool any = true;
  std::vector<Value> values;  // when !any: distinct, sorted by Value::Compare

  static RegionAxis Any() { return {}; }
  static RegionAxis Of(std::vector<Value> values);
  friend bool operator==(const RegionAxis& a, const RegionAxis& b);
};

struct Region {
  std::vector<RegionAxis> axes;  // one per fact of the enumeration
  uint64_t states = 0;
  std::vector<Value> example;  // one state of the region: a value per axis (null for facts not enumerated)
};

// Joins regions that are equal but in one axis, until none remain; an axis
// that then holds every value of `full_domains[axis]` (when known, i.e. a
// domain with constant bounds) becomes any. Keeps the first region's example
// and sums the states; the result is in the order of the first region of
// each group.
std::vector<Region> MergeRegions(std::vector<Region> regions,
                                 const std::vector<std::optional<std::vector<Value>>>& full_domains);

// Joins `from` into `into` when they are equal but in one axis (where both
// hold sets of values); returns whether it did. Cheap enough to call for each
// region as it is found, against the last one kept.
bool TryJoinRegion(Region& into, const Region& from);

// "n=3, ready=1, f in [1..2], role in {\"Leader\", \"Member\"}"; axes in
// `order`, skipping any; "every state" when every axis is any.
std::string FormatRegion(const Region& region, const std::vector<std::string>& names,
                         const std::vector<int>& order);

// "n=3, ready=1, ..." for the example, axes in `order` that have a value.
std::string FormatExample(const Region& region, const std::vector<std::string>& names,
                          const std::vector<int>& order);

}  // namespace ruleplane
