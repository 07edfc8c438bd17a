#include "engine/verify/plan_difference.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

namespace ruleplane {
namespace {

std::vector<std::string> Distinct(const std::vector<std::string>& actions) {
  std::vector<std::string> distinct;
  for (const std::string& action : actions) {
    if (std::find(distinct.begin(), distinct.end(), action) == distinct.end()) distinct.push_back(action);
  }
  return distinct;
}

std::string Joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += item + ",";
  return text;
}

void AddAxes(const Value& observation, std::vector<std::string>& axes) {
  if (!observation.is_map()) return;
  for (const auto& [key, value] : observation.map_value()) {
    if (key.is_string() && std::find(axes.begin(), axes.end(), key.string_value()) == axes.end())
      axes.push_back(key.string_value());
  }
}

std::vector<Value> AxisValues(const Value& observation, const std::vector<std::string>& axes) {
  std::vector<Value> values;
  for (const std::string& axis : axes) {
    const Value* value = observation.Find(axis);
    values.push_back(value != nullptr ? *value : Value::Null());
  }
  return values;
}

std::string ExampleKey(const std::vector<Value>& values) {
  std::string key;
  for (const Value& value : values) key += value.DebugString() + "\n";
  return key;
}

}  // namespace

PlanDifferences GroupPlanDifferences(const std::vector<Value>& observed,
                                     const std::vector<PlannedDifferently>& different) {
  PlanDifferences result;
  for (const Value& observation : observed) AddAxes(observation, result.axes);
  for (const PlannedDifferently& snapshot : different) AddAxes(snapshot.observation, result.axes);

  // Every value each axis takes in the grid, so that a region covering them reads as any.
  std::vector<std::optional<std::vector<Value>>> grid_values(result.axes.size(), std::vector<Value>{});
  auto note_values = [&](const Value& observation) {
    const std::vector<Value> values = AxisValues(observation, result.axes);
    for (size_t axis = 0; axis < values.size(); ++axis) grid_values[axis]->push_back(values[axis]);
  };
  for (const Value& observation : observed) note_values(observation);
  for (const PlannedDifferently& snapshot : different) note_values(snapshot.observation);
  for (auto& values : grid_values) {
    std::sort(values->begin(), values->end(),
              [](const Value& a, const Value& b) { return Value::Compare(a, b) < 0; });
    values->erase(std::unique(values->begin(), values->end(),
                              [](const Value& a, const Value& b) { return Value::Compare(a, b) == 0; }),
                  values->end());
  }

  std::map<std::string, size_t> group_of;
  std::vector<std::vector<Region>> points;
  std::vector<std::map<std::string, std::string>> sources;  // per group: example key -> source
  for (const PlannedDifferently& snapshot : different) {
    std::vector<std::string> old_actions = Distinct(snapshot.old_actions);
    std::vector<std::string> new_actions = Distinct(snapshot.new_actions);
    const auto [it, inserted] =
        group_of.emplace(Joined(old_actions) + "\n" + Joined(new_actions), result.groups.size());
    if (inserted) {
      result.groups.push_back({std::move(old_actions), std::move(new_actions), 0, {}, {}});
      points.emplace_back();
      sources.emplace_back();
    }
    PlanDifferenceGroup& group = result.groups[it->second];
    ++group.snapshots;
    Region point;
    point.states = 1;
    point.example = AxisValues(snapshot.observation, result.axes);
    for (const Value& value : point.example) point.axes.push_back(RegionAxis::Of({value}));
    sources[it->second].emplace(ExampleKey(point.example), snapshot.source);
    points[it->second].push_back(std::move(point));
  }
  for (size_t g = 0; g < result.groups.size(); ++g) {
    PlanDifferenceGroup& group = result.groups[g];
    group.regions = MergeRegions(std::move(points[g]), grid_values);
    for (const Region& region : group.regions)
      group.examples.push_back(sources[g][ExampleKey(region.example)]);
  }
  std::stable_sort(
      result.groups.begin(), result.groups.end(),
      [](const PlanDifferenceGroup& a, const PlanDifferenceGroup& b) { return a.snapshots > b.snapshots; });
  return result;
}

}  // namespace ruleplane
