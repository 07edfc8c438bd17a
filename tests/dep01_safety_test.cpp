// The DEP-01 safety properties of the bundled etcd-druid rule files, checked
// over every combination of member states for clusters of 1, 3, 5 and 7:
//   - no plan scales the StatefulSet to 0 while a majority is Ready;
//   - no plan deletes a pod while quorum is lost.
// And malformed snapshots end in an error that names the object and the field.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/common/snapshot.h"
#include "engine/match/compiled_rule_set.h"
#include "engine/plan/plan.h"
#include "engine/rule_file/action_catalogue.h"
#include "engine/rule_file/rule_loader.h"
#include "tests/support/source_paths.h"

namespace ruleplane {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using testing::kSourceDir;

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// What each member is, as etcd-druid's status and the member's pod and lease show it.
enum class MemberState { kReady, kNotReadyLong, kNotReadyShort, kUnknownLong, kUnknownShort };
constexpr MemberState kAllStates[] = {MemberState::kReady, MemberState::kNotReadyLong,
                                      MemberState::kNotReadyShort, MemberState::kUnknownLong,
                                      MemberState::kUnknownShort};
constexpr int kStateCount = 5;

// The conditions as last written: "True", "False" or absent (""), independent
// of the members, so that stale conditions are covered too. Every rule that
// reads BackupReady compares it with "True", so absent and "False" act alike.
constexpr const char* kConditionValues[] = {"True", "False", ""};
constexpr const char* kBackupReadyValues[] = {"True", "False"};

const char* kMemberIds[] = {"8e9e05c52164694d", "91bc3c398fb3c146", "fd422379fda50e48", "2f0e6c1b8a9d3e71",
                            "c4a7d92e15b08f36", "5b7d0e2a94c3f168", "e1a3c5b7d9f02468"};

struct ClusterState {
  int n = 0;
  std::vector<MemberState> members;  // by ordinal
  const char* ready_condition = "";
  const char* all_members_ready_condition = "";
  const char* backup_ready_condition = "";

  int Count(MemberState state) const {
    return static_cast<int>(std::count(members.begin(), members.end(), state));
  }
  std::string Describe() const {
    std::ostringstream out;
    out << "n=" << n << " ready=" << Count(MemberState::kReady)
        << " notReadyLong=" << Count(MemberState::kNotReadyLong)
        << " notReadyShort=" << Count(MemberState::kNotReadyShort)
        << " unknownLong=" << Count(MemberState::kUnknownLong)
        << " unknownShort=" << Count(MemberState::kUnknownShort) << " conditions Ready=" << ready_condition
        << " AllMembersReady=" << all_members_ready_condition << " BackupReady=" << backup_ready_condition;
    return out.str();
  }
};

json Condition(const std::string& type, const std::string& status) {
  return {{"type", type}, {"status", status}, {"lastTransitionTime", "2024-05-01T09:40:00Z"}};
}

// An EtcdClusterSnapshot observed at 10:00 with the default grace periods (5m
// NotReady, 1m Unknown): "long" is past them, "short" is not.
std::string SnapshotText(const ClusterState& state) {
  json members = json::array(), pods = json::array(), leases = json::array();
  int ready_pods = 0;
  for (int i = 0; i < state.n; ++i) {
    const std::string name = "etcd-main-" + std::to_string(i);
    const std::string role = i == 0 ? "Leader" : "Member";
    std::string status = "Ready", reason = "LeaseSucceeded", since = "2024-05-01T08:00:00Z";
    switch (state.members[i]) {
      case MemberState::kReady:
        break;
      case MemberState::kNotReadyLong:
        status = "NotReady", reason = "PodNotReady", since = "2024-05-01T09:50:00Z";
        break;
      case MemberState::kNotReadyShort:
        status = "NotReady", reason = "PodNotReady", since = "2024-05-01T09:58:00Z";
        break;
      case MemberState::kUnknownLong:
        status = "Unknown", reason = "LeaseExpired", since = "2024-05-01T09:57:00Z";
        break;
      case MemberState::kUnknownShort:
        status = "Unknown", reason = "LeaseExpired", since = "2024-05-01T09:59:30Z";
        break;
    }
    members.push_back({{"name", name},
                       {"id", kMemberIds[i]},
                       {"role", role},
                       {"status", status},
                       {"reason", reason},
                       {"lastTransitionTime", since}});
    // A NotReady member's pod is not Ready; an Unknown member's pod still is (its sidecar cannot renew).
    const bool pod_ready = status != "NotReady";
    ready_pods += pod_ready ? 1 : 0;
    pods.push_back({{"apiVersion", "v1"},
                    {"kind", "Pod"},
                    {"metadata", {{"name", name}}},
                    {"status",
                     {{"phase", "Running"},
                      {"conditions", {{{"type", "Ready"}, {"status", pod_ready ? "True" : "False"}}}}}}});
    // Only a Ready member's sidecar renews its lease.
    const std::string renewed =
        status == "Ready" ? "2024-05-01T09:59:50.000000Z" : "2024-05-01T09:49:00.000000Z";
    leases.push_back({{"apiVersion", "coordination.k8s.io/v1"},
                      {"kind", "Lease"},
                      {"metadata", {{"name", name}}},
                      {"spec",
                       {{"holderIdentity", std::string(kMemberIds[i]) + ":" + role},
                        {"leaseDurationSeconds", 40},
                        {"renewTime", renewed}}}});
  }
  json conditions = json::array();
  if (*state.ready_condition) conditions.push_back(Condition("Ready", state.ready_condition));
  if (*state.all_members_ready_condition) {
    conditions.push_back(Condition("AllMembersReady", state.all_members_ready_condition));
  }
  if (*state.backup_ready_condition)
    conditions.push_back(Condition("BackupReady", state.backup_ready_condition));
  json sts_status = {{"replicas", state.n},
                     {"currentRevision", "etcd-main-6d8f7b9c54"},
                     {"updateRevision", "etcd-main-6d8f7b9c54"}};
  if (ready_pods > 0) sts_status["readyReplicas"] = ready_pods;
  json snapshot = {{"apiVersion", "ruleplane.dev/v1"},
                   {"kind", "EtcdClusterSnapshot"},
                   {"observedAt", "2024-05-01T10:00:00Z"},
                   {"etcd",
                    {{"apiVersion", "druid.gardener.cloud/v1alpha1"},
                     {"kind", "Etcd"},
                     {"metadata", {{"name", "etcd-main"}, {"generation", 4}}},
                     {"spec", {{"replicas", state.n}, {"backup", {{"store", {{"provider", "S3"}}}}}}},
                     {"status",
                      {{"observedGeneration", 4},
                       {"clusterSize", state.n},
                       {"conditions", conditions},
                       {"members", members}}}}},
                   {"statefulSet",
                    {{"apiVersion", "apps/v1"},
                     {"kind", "StatefulSet"},
                     {"metadata", {{"name", "etcd-main"}}},
                     {"spec", {{"replicas", state.n}}},
                     {"status", sts_status}}},
                   {"pods", pods},
                   {"leases", leases},
                   {"podDisruptionBudget",
                    {{"apiVersion", "policy/v1"},
                     {"kind", "PodDisruptionBudget"},
                     {"metadata", {{"name", "etcd-main"}}},
                     {"spec", {{"minAvailable", state.n / 2 + 1}}}}}};
  return snapshot.dump();
}

// Every way to give n members one of the kStateCount states, up to order
// (members in state order by ordinal): the multisets of size n.
void ForEachComposition(int n, int first_state, std::vector<MemberState>& members,
                        const std::function<void(const std::vector<MemberState>&)>& visit) {
  if (static_cast<int>(members.size()) == n) {
    visit(members);
    return;
  }
  for (int s = first_state; s < kStateCount; ++s) {
    members.push_back(kAllStates[s]);
    ForEachComposition(n, s, members, visit);
    members.pop_back();
  }
}

class Dep01Safety : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string catalogue_text = ReadText(kSourceDir / "actions/catalogue.yaml");
    auto catalogue = LoadActionCatalogue(catalogue_text, "actions/catalogue.yaml");
    ASSERT_TRUE(catalogue.catalogue) << "the action catalogue does not load";
    catalogue_ = catalogue.catalogue;

    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(kSourceDir / "rules/etcd-druid")) {
      if (entry.path().extension() == ".yaml") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    rule_sets_ = new std::vector<std::shared_ptr<const CompiledRuleSet>>();
    for (const fs::path& file : files) {
      const std::string relative = fs::relative(file, kSourceDir).string();
      auto loaded = LoadRuleFile(ReadText(file), relative, catalogue_.get());
      ASSERT_TRUE(loaded.rule_set) << relative << ": "
                                   << (loaded.diagnostics.empty() ? "" : loaded.diagnostics[0].message);
      auto compiled = CompiledRuleSet::Compile(loaded.rule_set);
      ASSERT_TRUE(compiled.ok()) << relative << ": " << compiled.error().message;
      rule_sets_->push_back(*compiled);
    }
  }

  static void TearDownTestSuite() {
    delete rule_sets_;
    rule_sets_ = nullptr;
    catalogue_.reset();
  }

  static Result<Plan> PlanFor(const std::string& snapshot_text,
                              const std::vector<std::shared_ptr<const CompiledRuleSet>>& rule_sets) {
    auto snapshot = ParseSnapshot(snapshot_text);
    if (!snapshot.ok()) return snapshot.error();
    return MakePlan(rule_sets, *snapshot, {}, catalogue_.get());
  }

  static std::shared_ptr<const ActionCatalogue> catalogue_;
  static std::vector<std::shared_ptr<const CompiledRuleSet>>* rule_sets_;
};

std::shared_ptr<const ActionCatalogue> Dep01Safety::catalogue_;
std::vector<std::shared_ptr<const CompiledRuleSet>>* Dep01Safety::rule_sets_ = nullptr;

TEST_F(Dep01Safety, BundledRuleFilesAreAllLoaded) {
  ASSERT_NE(rule_sets_, nullptr);
  std::vector<std::string> names;
  for (const auto& rule_set : *rule_sets_) names.push_back(rule_set->rule_set().name);
  EXPECT_NE(std::find(names.begin(), names.end(), "etcd-druid-status"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "etcd-druid-status-pdb"), names.end());
  EXPECT_GE(names.size(), 4u);
}

TEST_F(Dep01Safety, NoScaleToZeroWithAReadyMajorityAndNoPodDeletionWithoutQuorum) {
  ASSERT_NE(rule_sets_, nullptr);
  int states = 0, scale_to_zero_plans = 0, pod_deleting_plans = 0;
  for (int n : {1, 3, 5, 7}) {
    std::vector<MemberState> members;
    ForEachComposition(n, 0, members, [&](const std::vector<MemberState>& composition) {
      for (const char* ready : kConditionValues) {
        for (const char* all_ready : kConditionValues) {
          for (const char* backup : kBackupReadyValues) {
            ClusterState state{n, composition, ready, all_ready, backup};
            ++states;
            const int ready_members = state.Count(MemberState::kReady);
            const int not_ready_members = n - ready_members;
            auto plan = PlanFor(SnapshotText(state), *rule_sets_);
            ASSERT_TRUE(plan.ok()) << state.Describe() << ": " << plan.error().message;
            bool scales_to_zero = false, deletes_pods = false;
            for (const PlanStep& step : plan->steps) {
              if (step.action == "ScaleStatefulSet") {
                const Value* replicas = step.params.Find("replicas");
                ASSERT_NE(replicas, nullptr) << state.Describe();
                if (replicas->is_int() && replicas->int_value() == 0) scales_to_zero = true;
              }
              if (step.action == "DeletePod") deletes_pods = true;
            }
            EXPECT_FALSE(scales_to_zero && 2 * ready_members > n)
                << "scale to 0 with a Ready majority: " << state.Describe();
            EXPECT_FALSE(deletes_pods && 2 * not_ready_members >= n)
                << "pod deleted without quorum: " << state.Describe();
            scale_to_zero_plans += scales_to_zero ? 1 : 0;
            pod_deleting_plans += deletes_pods ? 1 : 0;
          }
        }
      }
    });
  }
  std::cout << "[ DEP-01   ] " << states
            << " cluster states (n = 1, 3, 5, 7; member states x conditions): " << scale_to_zero_plans
            << " plans scale to 0, " << pod_deleting_plans << " delete pods\n";
  // 5 + 35 + 126 + 330 member compositions (n = 1, 3, 5, 7), 3 * 3 * 2 condition combinations each.
  EXPECT_EQ(states, (5 + 35 + 126 + 330) * 18);
  // The properties are not vacuous: both kinds of step do occur.
  EXPECT_GT(scale_to_zero_plans, 0);
  EXPECT_GT(pod_deleting_plans, 0);
}

// A healthy 3-member cluster, as the API returns it, with one field broken.
std::string BrokenPinkOfHealth(const std::function<void(json&)>& breakIt) {
  json snapshot = json::parse(ReadText(kSourceDir / "examples/snapshots/pink-of-health.json"));
  breakIt(snapshot);
  return snapshot.dump();
}

// Each rule set either ignores the broken field or fails naming it, and at
// least one fails; the others are planned all the same.
void ExpectErrorNaming(const std::string& snapshot_text,
                       const std::vector<std::shared_ptr<const CompiledRuleSet>>& rule_sets,
                       const std::shared_ptr<const ActionCatalogue>& catalogue, const std::string& expected) {
  auto snapshot = ParseSnapshot(snapshot_text);
  ASSERT_TRUE(snapshot.ok()) << snapshot.error().message;
  auto plan = MakePlan(rule_sets, *snapshot, {}, catalogue.get());
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  int failed = 0;
  for (const PlannedRuleSet& planned : plan->rule_sets) {
    if (!planned.error) continue;
    ++failed;
    EXPECT_NE(planned.error->message.find(expected), std::string::npos)
        << planned.name << ": " << planned.error->message;
    for (const PlanStep& step : plan->steps) EXPECT_NE(step.rule_set, planned.name + "@" + planned.version);
  }
  EXPECT_GT(failed, 0) << "a plan instead of an error naming " << expected;
}

TEST_F(Dep01Safety, MemberWithoutStatusIsAnErrorNamingTheMemberAndTheField) {
  ExpectErrorNaming(BrokenPinkOfHealth([](json& s) { s["etcd"]["status"]["members"][1].erase("status"); }),
                    *rule_sets_, catalogue_, "etcd.status.members[etcd-main-1].status");
}

TEST_F(Dep01Safety, UnparsableRenewTimeIsAnErrorNamingTheLeaseAndTheField) {
  ExpectErrorNaming(
      BrokenPinkOfHealth([](json& s) { s["leases"][2]["spec"]["renewTime"] = "2024-05-01 09:59"; }),
      *rule_sets_, catalogue_, "leases[etcd-main-2].spec.renewTime");
}

TEST_F(Dep01Safety, MissingSpecReplicasIsAnErrorNamingTheField) {
  ExpectErrorNaming(BrokenPinkOfHealth([](json& s) { s["etcd"]["spec"].erase("replicas"); }), *rule_sets_,
                    catalogue_, "etcd.spec.replicas");
}

}  // namespace
}  // namespace ruleplane
