#include "engine/verify/plan_difference.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ruleplane {
namespace {

Value Observation(int n, int not_ready) {
  return Value::MakeMap(
      {{Value::String("n"), Value::Int(n)}, {Value::String("notReady"), Value::Int(not_ready)}});
}

TEST(PlanDifferenceTest, GroupsByActionsAndMergesTheGrid) {
  // The grid: n in {1, 3}, notReady in [0..n].
  std::vector<Value> observed;
  for (int n : {1, 3}) {
    for (int not_ready = 0; not_ready <= n; ++not_ready) observed.push_back(Observation(n, not_ready));
  }
  const std::vector<PlannedDifferently> different = {
      {"grid:2", Observation(1, 1), {"ScaleStatefulSet", "CreateMemberLease", "CreateMemberLease"}, {}},
      {"grid:5", Observation(3, 2), {"ScaleStatefulSet", "CreateMemberLease"}, {}},
      {"grid:6", Observation(3, 3), {"ScaleStatefulSet", "CreateMemberLease"}, {}},
      {"grid:4", Observation(3, 1), {"DeletePod"}, {}},
      {"grid:3", Observation(3, 0), {"SetPdbMinAvailable"}, {"SetPdbMinAvailable"}},
  };
  const PlanDifferences differences = GroupPlanDifferences(observed, different);
  EXPECT_EQ(differences.axes, (std::vector<std::string>{"n", "notReady"}));
  ASSERT_EQ(differences.groups.size(), 3u);

  const PlanDifferenceGroup& quorum_lost = differences.groups[0];
  EXPECT_EQ(quorum_lost.old_actions, (std::vector<std::string>{"ScaleStatefulSet", "CreateMemberLease"}));
  EXPECT_TRUE(quorum_lost.new_actions.empty());
  EXPECT_EQ(quorum_lost.snapshots, 3u);
  ASSERT_EQ(quorum_lost.regions.size(), 2u);
  const std::vector<int> order = {0, 1};
  EXPECT_EQ(FormatRegion(quorum_lost.regions[0], differences.axes, order), "n=1, notReady=1");
  EXPECT_EQ(FormatRegion(quorum_lost.regions[1], differences.axes, order), "n=3, notReady in {2, 3}");
  EXPECT_EQ(quorum_lost.examples, (std::vector<std::string>{"grid:2", "grid:5"}));

  EXPECT_EQ(differences.groups[1].old_actions, (std::vector<std::string>{"DeletePod"}));
  EXPECT_EQ(differences.groups[2].old_actions, differences.groups[2].new_actions);
}

TEST(PlanDifferenceTest, AnAxisCoveredWhollyReadsAsAny) {
  const std::vector<Value> observed = {Observation(3, 0), Observation(3, 1)};
  const std::vector<PlannedDifferently> different = {
      {"a", Observation(3, 0), {"DeletePod"}, {"RaiseAlert"}},
      {"b", Observation(3, 1), {"DeletePod"}, {"RaiseAlert"}},
  };
  const PlanDifferences differences = GroupPlanDifferences(observed, different);
  ASSERT_EQ(differences.groups.size(), 1u);
  ASSERT_EQ(differences.groups[0].regions.size(), 1u);
  EXPECT_EQ(FormatRegion(differences.groups[0].regions[0], differences.axes, {0, 1}), "every state");
  EXPECT_EQ(differences.groups[0].regions[0].states, 2u);
}

}  // namespace
}  // namespace ruleplane
