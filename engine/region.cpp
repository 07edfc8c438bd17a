#include "engine/region.h"

#include <algorithm>
#include <map>
#include <utility>

namespace ruleplane {
namespace {

bool Less(const Value& a, const Value& b) { return Value::Compare(a, b) < 0; }

// A text that identifies an axis exactly.
std::string AxisKey(const RegionAxis& axis) {
  if (axis.any) return "*";
  std::string key;
  for (const Value& value : axis.values) {
    key += value.DebugString();
    key += '\x1f';
  }
  return key;
}

std::string RegionKeyWithout(const Region& region, size_t skipped) {
  std::string key;
  for (size_t i = 0; i < region.axes.size(); ++i) {
    if (i != skipped) key += AxisKey(region.axes[i]);
    key += '\x1e';
  }
  return key;
}

// One pass over axis `axis`: regions equal elsewhere are joined. Returns
// whether anything was joined.
bool JoinAlong(std::vector<Region>& regions, size_t axis) {
  std::map<std::string, size_t> first_of_group;
  std::vector<Region> joined;
  bool changed = false;
  for (Region& region : regions) {
    auto [it, inserted] = first_of_group.emplace(RegionKeyWithout(region, axis), joined.size());
    if (inserted) {
      joined.push_back(std::move(region));
      continue;
    }
    Region& target = joined[it->second];
    RegionAxis& into = target.axes[axis];
    const RegionAxis& from = region.axes[axis];
    if (into.any != from.any) {
      // Cannot happen for disjoint regions; keep them apart.
      first_of_group.erase(it);
      first_of_group.emplace(RegionKeyWithout(region, axis), joined.size());
      joined.push_back(std::move(region));
      continue;
    }
    if (!into.any) {
      std::vector<Value> values = into.values;
      values.insert(values.end(), from.values.begin(), from.values.end());
      into = RegionAxis::Of(std::move(values));
    }
    target.states += region.states;
    changed = true;
  }
  regions = std::move(joined);
  return changed;
}

bool CoversDomain(const RegionAxis& axis, const std::vector<Value>& domain) {
  if (axis.any || axis.values.size() < domain.size()) return false;
  for (const Value& value : domain) {
    if (!std::binary_search(axis.values.begin(), axis.values.end(), value, Less)) return false;
  }
  return true;
}

bool ConsecutiveInts(const std::vector<Value>& values) {
  if (values.size() < 3) return false;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i].is_int()) return false;
    if (i > 0 && values[i].int_value() != values[i - 1].int_value() + 1) return false;
  }
  return true;
}

std::string AxisText(const std::string& name, const RegionAxis& axis) {
  if (axis.values.size() == 1) return name + "=" + axis.values[0].DebugString();
  if (ConsecutiveInts(axis.values)) {
    return name + " in [" + axis.values.front().DebugString() + ".." + axis.values.back().DebugString() + "]";
  }
  std::string text = name + " in {";
  for (size_t i = 0; i < axis.values.size(); ++i) text += (i ? ", " : "") + axis.values[i].DebugString();
  return text + "}";
}

}  // namespace

RegionAxis RegionAxis::Of(std::vector<Value> values) {
  std::sort(values.begin(), values.end(), Less);
  values.erase(std::unique(values.begin(), values.end(),
                           [](const Value& a, const Value& b) { return Value::Compare(a, b) == 0; }),
               values.end());
  RegionAxis axis;
  axis.any = false;
  axis.values = std::move(values);
  return axis;
}

bool operator==(const RegionAxis& a, const RegionAxis& b) {
  if (a.any != b.any || a.values.size() != b.values.size()) return false;
  for (size_t i = 0; i < a.values.size(); ++i) {
    if (Value::Compare(a.values[i], b.values[i]) != 0) return false;
  }
  return true;
}

std::vector<Region> MergeRegions(std::vector<Region> regions,
                                 const std::vector<std::optional<std::vector<Value>>>& full_domains) {
  if (regions.empty()) return regions;
  const size_t axes = regions.front().axes.size();
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t axis = axes; axis-- > 0;) changed = JoinAlong(regions, axis) || changed;
    for (Region& region : regions) {
      for (size_t axis = 0; axis < axes && axis < full_domains.size(); ++axis) {
        if (full_domains[axis] && CoversDomain(region.axes[axis], *full_domains[axis])) {
          region.axes[axis] = RegionAxis::Any();
          changed = true;
        }
      }
    }
  }
  return regions;
}

std::string FormatRegion(const Region& region, const std::vector<std::string>& names,
                         const std::vector<int>& order) {
  std::string text;
  for (const int axis : order) {
    if (axis >= static_cast<int>(region.axes.size()) || region.axes[axis].any) continue;
    if (!text.empty()) text += ", ";
    text += AxisText(names[axis], region.axes[axis]);
  }
  return text.empty() ? "every state" : text;
}

std::string FormatExample(const Region& region, const std::vector<std::string>& names,
                          const std::vector<int>& order) {
  std::string text;
  for (const int axis : order) {
    if (axis >= static_cast<int>(region.example.size()) || region.example[axis].is_null()) continue;
    if (!text.empty()) text += ", ";
    text += names[axis] + "=" + region.example[axis].DebugString();
  }
  return text;
}

}  // namespace ruleplane
