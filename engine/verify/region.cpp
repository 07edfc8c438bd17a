#include "engine/verify/region.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <utility>

namespace ruleplane {
namespace {

bool Less(const Value& a, const Value& b) { return Value::Compare(a, b) < 0; }

// Axes as small integers: equal axes get the same id.
class AxisIds {
 public:
  int Of(const RegionAxis& axis) {
    std::string key;
    if (axis.any) {
      key = "*";
    } else {
      for (const Value& value : axis.values) {
        key += value.DebugString();
        key += '\x1f';
      }
    }
    return ids_.emplace(std::move(key), static_cast<int>(ids_.size())).first->second;
  }

 private:
  std::unordered_map<std::string, int> ids_;
};

struct Box {
  Region region;
  std::vector<int> ids;  // per axis
};

std::string KeyWithout(const Box& box, size_t skipped) {
  std::string key(box.ids.size() * sizeof(int), '\0');
  for (size_t i = 0; i < box.ids.size(); ++i) {
    const int id = i == skipped ? -1 : box.ids[i];
    std::memcpy(key.data() + i * sizeof(int), &id, sizeof(int));
  }
  return key;
}

// One pass over axis `axis`: boxes equal elsewhere are joined. Returns
// whether anything was joined.
bool JoinAlong(std::vector<Box>& boxes, size_t axis, AxisIds& ids) {
  std::unordered_map<std::string, size_t> first_of_group;
  std::vector<Box> joined;
  bool changed = false;
  for (Box& box : boxes) {
    auto [it, inserted] = first_of_group.emplace(KeyWithout(box, axis), joined.size());
    if (!inserted) {
      Box& target = joined[it->second];
      RegionAxis& into = target.region.axes[axis];
      const RegionAxis& from = box.region.axes[axis];
      if (into.any == from.any) {  // disjoint boxes equal elsewhere never mix any and a set
        if (!into.any) {
          std::vector<Value> values = into.values;
          values.insert(values.end(), from.values.begin(), from.values.end());
          into = RegionAxis::Of(std::move(values));
          target.ids[axis] = ids.Of(into);
        }
        target.region.states += box.region.states;
        changed = true;
        continue;
      }
      it->second = joined.size();
    }
    joined.push_back(std::move(box));
  }
  boxes = std::move(joined);
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
  AxisIds ids;
  std::vector<Box> boxes;
  boxes.reserve(regions.size());
  for (Region& region : regions) {
    Box box{std::move(region), {}};
    for (const RegionAxis& axis : box.region.axes) box.ids.push_back(ids.Of(axis));
    boxes.push_back(std::move(box));
  }
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t axis = axes; axis-- > 0;) changed = JoinAlong(boxes, axis, ids) || changed;
    for (Box& box : boxes) {
      for (size_t axis = 0; axis < axes && axis < full_domains.size(); ++axis) {
        if (full_domains[axis] && CoversDomain(box.region.axes[axis], *full_domains[axis])) {
          box.region.axes[axis] = RegionAxis::Any();
          box.ids[axis] = ids.Of(box.region.axes[axis]);
          changed = true;
        }
      }
    }
  }
  regions.clear();
  for (Box& box : boxes) regions.push_back(std::move(box.region));
  return regions;
}

bool TryJoinRegion(Region& into, const Region& from) {
  if (into.axes.size() != from.axes.size()) return false;
  int differing = -1;
  for (size_t i = 0; i < into.axes.size(); ++i) {
    if (into.axes[i] == from.axes[i]) continue;
    if (differing >= 0 || into.axes[i].any || from.axes[i].any) return false;
    differing = static_cast<int>(i);
  }
  if (differing >= 0) {
    std::vector<Value> values = into.axes[differing].values;
    values.insert(values.end(), from.axes[differing].values.begin(), from.axes[differing].values.end());
    into.axes[differing] = RegionAxis::Of(std::move(values));
  }
  into.states += from.states;
  return true;
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
