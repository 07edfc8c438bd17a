// Version 1 (DEP-01) and version 2 (as released) of the bundled rule sets
// decide differently on the scenarios of rules/etcd-druid/VERSIONS.md: each
// listed snapshot is planned with the 1.x and with the 2.x files of its rules
// folder, and both plans must be the ones VERSIONS.md describes.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/common/snapshot.h"
#include "engine/match/compiled_rule_set.h"
#include "engine/plan/plan.h"
#include "engine/rule_file/action_catalogue.h"
#include "engine/rule_file/rule_loader.h"
#include "tests/support/source_paths.h"

namespace ruleplane {
namespace {

namespace fs = std::filesystem;

using testing::kSourceDir;

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

using Steps = std::vector<std::string>;

struct Scenario {
  std::string snapshot;  // in examples/snapshots/
  std::string folder;    // in rules/
  Steps version1;
  Steps version2;
};

// A step as "Action target" and the params that tell the versions apart.
std::string StepText(const PlanStep& step) {
  std::string text = step.action + " " + step.target;
  for (const char* key :
       {"type", "status", "reason", "replicas", "minAvailable", "learner", "initialClusterState"}) {
    const Value* value = step.params.Find(key);
    if (value == nullptr) continue;
    text += std::string(" ") + key + "=";
    text += value->is_string() ? value->string_value() : value->DebugString();
  }
  return text;
}

const std::vector<Scenario>& Scenarios() {
  static const auto* scenarios = new std::vector<Scenario>{
      {"v2-quorum-lost.json",
       "etcd-druid",
       {"ScaleStatefulSet etcd-main replicas=0", "WaitForPodsDeleted etcd-main", "MarkRebootstrap etcd-main",
        "RemoveStatusMember etcd-main-0", "RemoveStatusMember etcd-main-1", "RemoveStatusMember etcd-main-2",
        "DeleteMemberLease etcd-main-0", "DeleteMemberLease etcd-main-1", "DeleteMemberLease etcd-main-2",
        "CreateMemberLease etcd-main-0", "CreateMemberLease etcd-main-1", "CreateMemberLease etcd-main-2",
        "SetClusterSize etcd-main"},
       {}},
      {"v2-minority-not-ready.json", "etcd-druid", {"DeletePod etcd-main-2"}, {}},
      {"v2-scale-down.json",
       "etcd-druid",
       {"ScaleStatefulSet etcd-main replicas=3", "SetClusterSize etcd-main", "DeleteMemberLease etcd-main-3",
        "DeleteMemberLease etcd-main-4"},
       {"RemoveStatusMember etcd-main-3", "RemoveStatusMember etcd-main-4",
        "SetPdbMinAvailable etcd-main minAvailable=2", "RaiseAlert etcd-main"}},
      {"v2-scale-up.json",
       "etcd-druid",
       {"ApplyEtcdConfigMap etcd-main replicas=5", "ScaleStatefulSet etcd-main replicas=5",
        "CreateMemberLease etcd-main-3", "CreateMemberLease etcd-main-4",
        "SetPdbMinAvailable etcd-main minAvailable=3"},
       {"SetEtcdCondition etcd-main type=AllMembersReady status=False reason=NotAllMembersReady",
        "SetEtcdReady etcd-main", "SetPdbMinAvailable etcd-main minAvailable=3",
        "ApplyEtcdConfigMap etcd-main replicas=5", "ScaleStatefulSet etcd-main replicas=5",
        "CreateMemberLease etcd-main-3", "CreateMemberLease etcd-main-4"}},
      {"v2-scale-to-zero.json",
       "etcd-druid",
       {},
       {"RemoveStatusMember etcd-main-0", "RemoveStatusMember etcd-main-1", "RemoveStatusMember etcd-main-2",
        "SetEtcdCondition etcd-main type=Ready status=True reason=NotChecked",
        "SetEtcdCondition etcd-main type=AllMembersReady status=True reason=NotChecked",
        "SetEtcdCondition etcd-main type=AllMembersUpdated status=True reason=NotChecked",
        "SetEtcdCondition etcd-main type=BackupReady status=True reason=NotChecked",
        "SetEtcdCondition etcd-main type=ClusterIDMismatch status=False reason=NotChecked",
        "SetEtcdCondition etcd-main type=DataVolumesReady status=True reason=NotChecked",
        "SetPdbMinAvailable etcd-main minAvailable=0", "TriggerFullSnapshot etcd-main",
        "ScaleStatefulSet etcd-main replicas=0"}},
      {"v2-lease-expired.json",
       "etcd-druid",
       {"SetMemberStatus etcd-main-1 status=Unknown reason=LeaseExpired"},
       {"SetMemberStatus etcd-main-1 status=Unknown reason=LeaseExpired",
        "SetEtcdCondition etcd-main type=AllMembersReady status=False reason=NotAllMembersReady"}},
      {"v2-lease-renewed-50s-ago.json",
       "etcd-druid",
       {"SetMemberStatus etcd-main-1 status=Unknown reason=LeaseExpired"},
       {}},
      {"v2-pod-not-ready.json",
       "etcd-druid",
       {"SetMemberStatus etcd-main-1 status=NotReady reason=PodNotReady"},
       {}},
      {"v2-unknown-member.json",
       "etcd-druid",
       {"SetMemberStatus etcd-main-2 status=NotReady reason=UnknownGracePeriodExceeded"},
       {}},
      {"v2-backup-failed.json",
       "etcd-druid",
       {"RaiseAlert etcd-main", "SetPdbMinAvailable etcd-main minAvailable=3"},
       {}},
      {"v2-single-member.json", "etcd-druid", {}, {"SetPdbMinAvailable etcd-main minAvailable=0"}},
      {"v2-compaction-due.json", "etcd-druid", {}, {"CreateCompactionJob etcd-main-compactor"}},
      {"v2-member-init-corrupt-db.json",
       "etcd-backup-restore",
       {"RemoveMember etcd-main-2", "AddMember etcd-main-2 learner=false", "ResetDataDir etcd-main-2",
        "RestoreFullSnapshot etcd-main-2", "GenerateEtcdConfig etcd-main-2 initialClusterState=existing"},
       {"RemoveMember etcd-main-2", "ResetDataDir etcd-main-2", "AddMember etcd-main-2 learner=true",
        "GenerateEtcdConfig etcd-main-2 initialClusterState=existing"}},
      {"v2-member-init-rebootstrap.json",
       "etcd-backup-restore",
       {"ResetDataDir etcd-main-0", "RestoreFullSnapshot etcd-main-0",
        "ApplyIncrementalSnapshots etcd-main-0", "TakeFullSnapshot etcd-main-0",
        "GenerateEtcdConfig etcd-main-0 initialClusterState=new"},
       {"RemoveMember etcd-main-0", "ResetDataDir etcd-main-0", "AddMember etcd-main-0 learner=true",
        "GenerateEtcdConfig etcd-main-0 initialClusterState=existing"}},
      {"v2-member-init-scale-up.json",
       "etcd-backup-restore",
       {"ResetDataDir etcd-main-3", "RestoreFullSnapshot etcd-main-3", "AddMember etcd-main-3 learner=false",
        "GenerateEtcdConfig etcd-main-3 initialClusterState=existing"},
       {"ResetDataDir etcd-main-3", "AddMember etcd-main-3 learner=true",
        "GenerateEtcdConfig etcd-main-3 initialClusterState=existing"}},
      {"v2-member-init-wrong-volume.json",
       "etcd-backup-restore",
       {"ReuseEtcdConfig etcd-main-2"},
       {"AbortInitialization etcd-main-2 reason=wrong volume mounted: its safe_guard file names namespace "
        "shoot--prod--billing, not shoot--dev--demo"}},
  };
  return *scenarios;
}

class Versions : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto loaded =
        LoadActionCatalogue(ReadText(kSourceDir / "actions/catalogue.yaml"), "actions/catalogue.yaml");
    ASSERT_TRUE(loaded.catalogue) << "the action catalogue does not load";
    catalogue_ = new std::shared_ptr<const ActionCatalogue>(loaded.catalogue);
  }
  static void TearDownTestSuite() {
    delete catalogue_;
    catalogue_ = nullptr;
  }

  // The rule sets of rules/<folder> whose version has this major, in name order (as the CLI orders them).
  static std::vector<std::shared_ptr<const CompiledRuleSet>> RuleSets(const std::string& folder, int major) {
    std::map<std::string, std::shared_ptr<const CompiledRuleSet>> by_name;
    for (const auto& entry : fs::directory_iterator(kSourceDir / "rules" / folder)) {
      if (entry.path().extension() != ".yaml") continue;
      const std::string relative = fs::relative(entry.path(), kSourceDir).string();
      auto loaded = LoadRuleFile(ReadText(entry.path()), relative, catalogue_->get());
      EXPECT_TRUE(loaded.rule_set) << relative << " does not load";
      if (!loaded.rule_set || !loaded.rule_set->version.starts_with(std::to_string(major) + ".")) continue;
      auto compiled = CompiledRuleSet::Compile(loaded.rule_set);
      EXPECT_TRUE(compiled.ok()) << relative << ": " << compiled.error().message;
      if (!compiled.ok()) continue;
      EXPECT_EQ(by_name.count(loaded.rule_set->name), 0u)
          << "two " << major << ".x files named " << loaded.rule_set->name;
      by_name[loaded.rule_set->name] = *compiled;
    }
    std::vector<std::shared_ptr<const CompiledRuleSet>> rule_sets;
    for (const auto& [name, rule_set] : by_name) rule_sets.push_back(rule_set);
    return rule_sets;
  }

  static Steps PlanSteps(const std::string& snapshot_file, const std::string& folder, int major) {
    auto snapshot = ParseSnapshot(ReadText(kSourceDir / "examples/snapshots" / snapshot_file));
    EXPECT_TRUE(snapshot.ok()) << snapshot_file << ": " << snapshot.error().message;
    if (!snapshot.ok()) return {"(no snapshot)"};
    const auto rule_sets = RuleSets(folder, major);
    EXPECT_FALSE(rule_sets.empty()) << "no " << major << ".x rule sets in rules/" << folder;
    auto plan = MakePlan(rule_sets, *snapshot, {}, catalogue_->get());
    EXPECT_TRUE(plan.ok()) << snapshot_file << " with " << folder << "@" << major << ": "
                           << plan.error().message;
    if (!plan.ok()) return {"(no plan)"};
    Steps steps;
    for (const PlanStep& step : plan->steps) steps.push_back(StepText(step));
    return steps;
  }

  static std::shared_ptr<const ActionCatalogue>* catalogue_;
};

std::shared_ptr<const ActionCatalogue>* Versions::catalogue_ = nullptr;

TEST_F(Versions, EachScenarioPlansWhatVersionsMdSaysForBothVersions) {
  for (const Scenario& scenario : Scenarios()) {
    SCOPED_TRACE(scenario.snapshot);
    const Steps version1 = PlanSteps(scenario.snapshot, scenario.folder, 1);
    const Steps version2 = PlanSteps(scenario.snapshot, scenario.folder, 2);
    EXPECT_EQ(version1, scenario.version1) << "version 1";
    EXPECT_EQ(version2, scenario.version2) << "version 2";
    EXPECT_NE(version1, version2) << "the versions decide the same";
  }
}

TEST_F(Versions, AHealthyClusterPlansNothingInEitherVersion) {
  EXPECT_EQ(PlanSteps("v2-pink-of-health.json", "etcd-druid", 1), Steps{});
  EXPECT_EQ(PlanSteps("v2-pink-of-health.json", "etcd-druid", 2), Steps{});
}

TEST_F(Versions, VersionsMdListsExactlyTheseScenarios) {
  const std::string versions = ReadText(kSourceDir / "rules/etcd-druid/VERSIONS.md");
  ASSERT_FALSE(versions.empty()) << "rules/etcd-druid/VERSIONS.md is missing";
  std::set<std::string> listed;
  const std::regex heading(R"(\n### [0-9]+\. [^\n]* `(v2-[a-z0-9-]+\.json)`)");
  for (auto it = std::sregex_iterator(versions.begin(), versions.end(), heading);
       it != std::sregex_iterator(); ++it) {
    listed.insert((*it)[1].str());
  }
  std::set<std::string> tested;
  for (const Scenario& scenario : Scenarios()) tested.insert(scenario.snapshot);
  EXPECT_EQ(listed, tested);
  for (const std::string& snapshot : listed) {
    EXPECT_TRUE(fs::exists(kSourceDir / "examples/snapshots" / snapshot)) << snapshot;
  }
}

}  // namespace
}  // namespace ruleplane
