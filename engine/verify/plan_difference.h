// GroupPlanDifferences: sums up the snapshots that two versions of the rules
// plan differently (`ruleplane diff --snapshots`), when the snapshots carry
// the observation they were generated from.
//
// A generated snapshot may hold a top-level `observation` object: the values
// of the axes of the grid it belongs to ({"members": 3, "notReady": 2}), which
// rules ignore. Snapshots planned differently are grouped by the actions of
// both plans (their names, in plan order, each once), and each group's
// observations are merged into regions of the grid, as `verify` merges fact
// vectors:
//   old: ScaleStatefulSet, WaitForPodsDeleted, ...  new: no step
//     members=3, notReady in [2..3]  (16 snapshots)
// An axis that takes, within a region, every value it takes in the whole
// grid reads as any.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/common/value.h"
#include "engine/verify/region.h"

namespace ruleplane {

struct PlannedDifferently {
  std::string source;                                 // where the snapshot came from: "path" or "path:line"
  Value observation;                                  // its `observation` object, or null
  std::vector<std::string> old_actions, new_actions;  // each plan's step actions, in order
};

struct PlanDifferenceGroup {
  std::vector<std::string> old_actions, new_actions;  // distinct, in order of first appearance
  uint64_t snapshots = 0;
  std::vector<Region> regions;        // over the axes, each with the observation of one of its snapshots
  std::vector<std::string> examples;  // per region, the source of that snapshot
};

struct PlanDifferences {
  std::vector<std::string> axes;            // the observation keys, in order of first appearance
  std::vector<PlanDifferenceGroup> groups;  // the largest first
};

// `observed`: every snapshot of the grid (observations of those planned alike
// too, so that "any" means every value observed), and `different`: those
// planned differently.
PlanDifferences GroupPlanDifferences(const std::vector<Value>& observed,
                                     const std::vector<PlannedDifferently>& different);

}  // namespace ruleplane
