// The controller's gates and the status it keeps, on DEP-01's examples
// (examples/snapshots) planned with the bundled etcd-druid rules.
#include "controller/controller_gates.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "adapters/kubernetes/object_fields.h"
#include "cli/rule_library.h"
#include "controller/last_operation.h"
#include "engine/common/json_value.h"
#include "engine/common/snapshot.h"
#include "engine/common/time_util.h"
#include "tests/support/source_paths.h"

namespace ruleplane {
namespace {

nlohmann::json Example(const std::string& name) {
  std::ifstream in(std::string(testing::SourceDir()) + "/examples/snapshots/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

Snapshot Parsed(const nlohmann::json& document) {
  auto snapshot = ParseSnapshot(document.dump());
  EXPECT_TRUE(snapshot.ok()) << snapshot.error().message;
  return *snapshot;
}

class ControllerGatesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ostringstream errors;
    library_ = cli::LoadRuleLibrary(cli::DefaultRuleReferences(), errors);
    ASSERT_TRUE(library_) << errors.str();
    rule_sets_ = cli::SelectForSubject(*library_, "EtcdCluster", errors);
    ASSERT_FALSE(rule_sets_.empty()) << errors.str();
  }

  Plan PlanFor(const Snapshot& snapshot) {
    auto plan = MakePlan(rule_sets_, snapshot, {}, library_->catalogue.get());
    EXPECT_TRUE(plan.ok());
    return *plan;
  }

  const PlanStep& StepOf(const Plan& plan, const std::string& action) {
    for (const PlanStep& step : plan.steps) {
      if (step.action == action) return step;
    }
    ADD_FAILURE() << "no " << action << " step";
    return plan.steps.front();
  }

  std::unique_ptr<cli::RuleLibrary> library_;
  std::vector<std::shared_ptr<const CompiledRuleSet>> rule_sets_;
};

TEST_F(ControllerGatesTest, QuorumLossRecoveryWaitsForAnApprovalOfThisVeryPlan) {
  nlohmann::json document = Example("quorum-lost.json");
  Snapshot snapshot = Parsed(document);
  const Plan plan = PlanFor(snapshot);
  const std::string digest = PlanDigest(plan);
  const PlanStep& scale = StepOf(plan, "ScaleStatefulSet");
  ASSERT_TRUE(IsQuorumLossRecovery(scale, *snapshot.document.Find("etcd")));

  GateDecision gate = GateControllerStep(scale, snapshot.document, digest, snapshot.observed_at, {});
  EXPECT_TRUE(gate.wait);
  EXPECT_NE(gate.reason.find("ruleplane.dev/approve-plan=" + digest), std::string::npos) << gate.reason;
  EXPECT_NE(gate.reason.find("1051874"), std::string::npos) << "the data-loss bound: " << gate.reason;

  document["etcd"]["metadata"]["annotations"]["ruleplane.dev/approve-plan"] = "sha256:another";
  gate = GateControllerStep(scale, Parsed(document).document, digest, snapshot.observed_at, {});
  EXPECT_TRUE(gate.wait) << "an approval of another plan";

  document["etcd"]["metadata"]["annotations"]["ruleplane.dev/approve-plan"] = digest;
  gate = GateControllerStep(scale, Parsed(document).document, digest, snapshot.observed_at, {});
  EXPECT_FALSE(gate.wait) << gate.reason;
  EXPECT_TRUE(gate.allows_disruptive);

  gate = GateControllerStep(scale, snapshot.document, digest, snapshot.observed_at, {true});
  EXPECT_FALSE(gate.wait) << "--auto-recover-quorum-loss";
  EXPECT_EQ(PlanDigest(PlanFor(Parsed(document))), digest) << "an annotation does not change the decision";
}

// An Etcd deleted and created again under the same name (a manifest applied
// again, its approval annotation with it) plans the same steps, so the plan's
// own digest (PlanDigest) is the same: an approval of the first object's
// recovery passed for the second one's.
TEST_F(ControllerGatesTest, AnApprovalCarriedOntoAReCreatedEtcdOfTheSameNameApprovesNothing) {
  nlohmann::json document = Example("quorum-lost.json");
  const Snapshot first = Parsed(document);
  const Plan first_plan = PlanFor(first);
  const std::string approved = ApprovalDigest(first_plan, *first.document.Find("etcd"));
  EXPECT_NE(approved, PlanDigest(first_plan));

  document["etcd"]["metadata"]["uid"] = "0b1e7c55-9d1f-4c7e-8a3b-6f2d9e4a1c08";
  document["etcd"]["metadata"]["annotations"]["ruleplane.dev/approve-plan"] = approved;
  const Snapshot again = Parsed(document);
  const Plan plan = PlanFor(again);
  ASSERT_EQ(PlanDigest(plan), PlanDigest(first_plan)) << "the same decision";
  const std::string digest = ApprovalDigest(plan, *again.document.Find("etcd"));
  EXPECT_NE(digest, approved);
  const GateDecision gate =
      GateControllerStep(StepOf(plan, "ScaleStatefulSet"), again.document, digest, again.observed_at, {});
  EXPECT_TRUE(gate.wait) << "approved by the annotation of an Etcd that no longer exists";
  EXPECT_NE(gate.reason.find("ruleplane.dev/approve-plan=" + digest), std::string::npos) << gate.reason;

  document["etcd"]["metadata"]["annotations"]["ruleplane.dev/approve-plan"] = digest;
  EXPECT_FALSE(GateControllerStep(StepOf(plan, "ScaleStatefulSet"), Parsed(document).document, digest,
                                  again.observed_at, {})
                   .wait)
      << "its own approval";
}

// A StatefulSet at 0 replicas for another reason (a hibernation, a hand-made
// scale) with the quorum-loss rule matching found the scale done and wrote the
// marker, and ordinal 0 re-created the cluster from the backup unapproved.
TEST_F(ControllerGatesTest, TheRebootstrapMarkerWaitsForThisDecisionsApprovedScaleToZero) {
  nlohmann::json document = Example("quorum-lost.json");
  const Plan plan = PlanFor(Parsed(document));
  const std::string digest = PlanDigest(plan);
  const PlanStep& scale = StepOf(plan, "ScaleStatefulSet");
  const PlanStep& mark = StepOf(plan, "MarkRebootstrap");
  // After the scale the plan has another digest (no pod left to wait for).
  auto gate = [&] {
    const Snapshot snapshot = Parsed(document);
    return GateControllerStep(mark, snapshot.document, "sha256:after-the-scale", snapshot.observed_at, {});
  };
  EXPECT_TRUE(gate().wait) << "no scale to 0 recorded";

  // What the scale's intent records, the backup its MarkRebootstrap names included.
  const Value intent = DisruptiveStepIntent(scale, plan, digest, Parsed(document).observed_at);
  document["etcd"]["status"]["lastOperation"]["lastDisruptiveStep"] =
      nlohmann::json::parse(FormatJson(*ValueAt(intent, {"lastOperation", "lastDisruptiveStep"})));
  ASSERT_EQ(document["etcd"]["status"]["lastOperation"]["lastDisruptiveStep"]["backupRevision"], 1051874);
  document["etcd"]["status"]["lastOperation"]["lastDisruptiveStep"]["id"] =
      "etcd-druid-status-scaling/scale-to-zero/0";
  document["etcd"]["metadata"]["annotations"]["ruleplane.dev/approve-plan"] = digest;
  EXPECT_TRUE(gate().wait) << "a hibernation's scale";

  document["etcd"]["status"]["lastOperation"]["lastDisruptiveStep"]["id"] = scale.id;
  document["etcd"]["status"]["lastOperation"]["lastDisruptiveStep"]["planDigest"] = "sha256:another";
  EXPECT_TRUE(gate().wait) << "this rule's scale, approved for another plan";

  document["etcd"]["status"]["lastOperation"]["lastDisruptiveStep"]["planDigest"] = digest;
  EXPECT_FALSE(gate().wait) << gate().reason;
}

// The approval covered the plan as it stood before the scale, whose marker
// named one backup. After the scale, a marker that names an older backup
// (the newest snapshot Lease went back: a compaction, a stranger, a backup
// store replaced) loses more than was approved: it waits for an approval of
// the plan as it is now. A newer backup (a final snapshot as a member
// stopped) loses less and needs none. Before, any backup passed on the
// recorded scale's approval.
TEST_F(ControllerGatesTest, TheRebootstrapMarkerNamingAnOlderBackupThanTheApprovedOneWaitsForANewApproval) {
  nlohmann::json document = Example("quorum-lost.json");
  const Plan plan = PlanFor(Parsed(document));
  const std::string approved = PlanDigest(plan);
  const PlanStep& scale = StepOf(plan, "ScaleStatefulSet");
  const Value intent = DisruptiveStepIntent(scale, plan, approved, Parsed(document).observed_at);
  document["etcd"]["status"]["lastOperation"]["lastDisruptiveStep"] =
      nlohmann::json::parse(FormatJson(*ValueAt(intent, {"lastOperation", "lastDisruptiveStep"})));
  document["etcd"]["metadata"]["annotations"]["ruleplane.dev/approve-plan"] = approved;
  PlanStep mark = StepOf(plan, "MarkRebootstrap");
  const std::string now = "sha256:the-plan-after-the-scale";
  auto gate_naming = [&](int64_t backup_revision) {
    mark.params = WithField(mark.params, "backupRevision", Value::Int(backup_revision));
    const Snapshot snapshot = Parsed(document);
    return GateControllerStep(mark, snapshot.document, now, snapshot.observed_at, {});
  };
  EXPECT_FALSE(gate_naming(1051874).wait) << gate_naming(1051874).reason;
  EXPECT_FALSE(gate_naming(1051900).wait) << "a newer backup loses less";
  const GateDecision older = gate_naming(1051000);
  EXPECT_TRUE(older.wait);
  EXPECT_NE(older.reason.find("ruleplane.dev/approve-plan=" + now), std::string::npos) << older.reason;

  document["etcd"]["metadata"]["annotations"]["ruleplane.dev/approve-plan"] = now;
  EXPECT_FALSE(gate_naming(1051000).wait) << "approved as it is now";

  document["etcd"]["metadata"]["annotations"]["ruleplane.dev/approve-plan"] = approved;
  document["etcd"]["status"]["lastOperation"]["lastDisruptiveStep"].erase("backupRevision");
  EXPECT_TRUE(gate_naming(1051874).wait) << "a scale recorded without the backup it covered";
}

TEST_F(ControllerGatesTest, HibernationIsAScaleToZeroWithoutApprovalOrDataLossBound) {
  std::ostringstream errors;
  auto v2 = cli::LoadRuleLibrary({"etcd-druid-status-scaling@2.2.0"}, errors);
  ASSERT_TRUE(v2) << errors.str();
  const auto scaling = cli::SelectForSubject(*v2, "EtcdCluster", errors);
  ASSERT_EQ(scaling.size(), 1u) << errors.str();
  const Snapshot snapshot = Parsed(Example("v2-scale-to-zero.json"));
  auto plan = MakePlan(scaling, snapshot, {}, v2->catalogue.get());
  ASSERT_TRUE(plan.ok());
  const PlanStep& scale = StepOf(*plan, "ScaleStatefulSet");
  EXPECT_FALSE(IsQuorumLossRecovery(scale, *snapshot.document.Find("etcd"))) << "spec.replicas is 0";
  const GateDecision gate =
      GateControllerStep(scale, snapshot.document, PlanDigest(*plan), snapshot.observed_at, {});
  EXPECT_FALSE(gate.wait) << gate.reason;
  EXPECT_FALSE(gate.allows_disruptive) << "a disruptive step like any other: --allow-disruptive decides";

  const Value status =
      LastOperationStatus(*snapshot.document.Find("etcd"), *plan, PlanDigest(*plan), ExecutionReport{},
                          DataLossBoundOf(snapshot.document), snapshot.observed_at, Value());
  EXPECT_EQ(ValueAt(status, {"lastOperation", "dataLossBound"}), nullptr) << "nothing is restored";
}

TEST_F(ControllerGatesTest, TheDataLossBoundIsTheMembersRevisionAgainstTheBackups) {
  nlohmann::json document = Example("quorum-lost.json");
  DataLossBound bound = DataLossBoundOf(Parsed(document).document);
  EXPECT_EQ(bound.backup_revision, 1051874) << "the newer of the full and delta snapshot Leases";
  EXPECT_EQ(bound.observed_revision, -1);
  EXPECT_EQ(bound.revisions(), -1) << "no member reported its revision: unbounded";
  document["leases"][0]["metadata"]["annotations"]["ruleplane.dev/revision"] = "1051900";
  document["leases"][0]["metadata"]["annotations"]["ruleplane.dev/revision-time"] = "2024-05-01T09:59:50.0Z";
  document["leases"][1]["metadata"]["annotations"]["ruleplane.dev/revision"] = "1051880";
  bound = DataLossBoundOf(Parsed(document).document);
  EXPECT_EQ(bound.observed_revision, 1051900);
  EXPECT_EQ(bound.observed_member, "etcd-main-0");
  EXPECT_EQ(bound.revisions(), 26);
  EXPECT_NE(bound.Describe().find("(etcd-main-0 at 2024-05-01T09:59:50.0Z): at least 26 revisions"),
            std::string::npos)
      << bound.Describe();
  EXPECT_NE(bound.Describe().find("a lower bound"), std::string::npos)
      << "writes after the last reading are not counted: " << bound.Describe();
}

// Issue 41, hazard 4: a member Lease's revision counts only when a member
// etcd lists now, in the cluster it answers for, recorded it. Without the
// member list (as before), a Lease another cluster left on the same name (an
// Etcd re-created on it, a split brain) set the bound at its own revision
// (2,000,000 here), and one anybody patched counted the same.
TEST_F(ControllerGatesTest, TheDataLossBoundCountsOnlyRevisionsOfMembersEtcdListsNow) {
  nlohmann::json document = Example("quorum-lost.json");
  auto recorded = [&](int lease, const std::string& revision, const std::string& recorder) {
    document["leases"][lease]["metadata"]["annotations"] = {{"ruleplane.dev/revision", revision},
                                                            {"ruleplane.dev/revision-member", recorder}};
  };
  recorded(0, "1051900", "8e9e05c52164694d:c1");
  recorded(1, "2000000", "91bc3c398fb3c146:c0");  // the same member ID, another cluster
  recorded(2, "1051875", "badbadbad:c1");         // no member of the cluster
  const Snapshot snapshot = Parsed(document);

  const DataLossBound unchecked = DataLossBoundOf(snapshot.document);
  EXPECT_EQ(unchecked.observed_revision, 2000000) << "without the member list every Lease counts";
  EXPECT_NE(unchecked.Describe().find("the member Leases were not checked against etcd's member list"),
            std::string::npos)
      << unchecked.Describe();

  const EtcdMembership membership{.cluster_id = "c1",
                                  .member_ids = {"8e9e05c52164694d", "91bc3c398fb3c146", "fd422379fda50e48"}};
  const DataLossBound bound = DataLossBoundOf(snapshot.document, &membership);
  EXPECT_EQ(bound.observed_revision, 1051900);
  EXPECT_EQ(bound.observed_member, "etcd-main-0");
  EXPECT_EQ(bound.revisions(), 26);
  EXPECT_EQ(bound.uncounted,
            (std::vector<std::string>{"etcd-main-1 (91bc3c398fb3c146:c0)", "etcd-main-2 (badbadbad:c1)"}));
  EXPECT_TRUE(bound.unchecked.empty()) << bound.unchecked;
  EXPECT_EQ(ValueAt(bound.ToValue(), {"uncountedLeases"})->list_value().size(), 2u);
  EXPECT_TRUE(ValueAt(bound.ToValue(), {"membershipChecked"})->bool_value());

  // What the approver reads at the gate is that bound.
  const Plan plan = PlanFor(snapshot);
  const PlanStep& scale = StepOf(plan, "ScaleStatefulSet");
  const GateDecision gate = GateControllerStep(scale, snapshot.document, PlanDigest(plan),
                                               snapshot.observed_at, {.membership = &membership});
  EXPECT_TRUE(gate.wait);
  EXPECT_NE(gate.reason.find("(etcd-main-0): at least 26 revisions"), std::string::npos) << gate.reason;
  EXPECT_NE(gate.reason.find("not counted, as no member etcd lists now recorded them: etcd-main-1 "
                             "(91bc3c398fb3c146:c0), etcd-main-2 (badbadbad:c1)"),
            std::string::npos)
      << gate.reason;

  // No member answered: every Lease counts, and the bound says it was not checked.
  const EtcdMembership none{.unavailable = "no member answered (connection refused)"};
  const DataLossBound blind = DataLossBoundOf(snapshot.document, &none);
  EXPECT_EQ(blind.observed_revision, 2000000);
  EXPECT_NE(blind.Describe().find("not checked against etcd's member list: no member answered"),
            std::string::npos)
      << blind.Describe();
  EXPECT_FALSE(ValueAt(blind.ToValue(), {"membershipChecked"})->bool_value());
}

TEST_F(ControllerGatesTest, AMembershipChangeWaitsUntilEveryMemberThatStaysIsReady) {
  nlohmann::json document = Example("scale-up.json");
  Snapshot snapshot = Parsed(document);
  const Plan plan = PlanFor(snapshot);
  const PlanStep& scale = StepOf(plan, "ScaleStatefulSet");
  EXPECT_FALSE(GateControllerStep(scale, snapshot.document, PlanDigest(plan), snapshot.observed_at, {}).wait);
  for (auto& member : document["etcd"]["status"]["members"]) {
    if (member["name"] == "etcd-main-1") member["status"] = "NotReady";
  }
  const GateDecision gate =
      GateControllerStep(scale, Parsed(document).document, PlanDigest(plan), snapshot.observed_at, {});
  EXPECT_TRUE(gate.wait);
  EXPECT_NE(gate.reason.find("etcd-main-1"), std::string::npos) << gate.reason;
}

TEST_F(ControllerGatesTest, ADisruptiveStepWaitsForTheMinimumIntervalKeptInTheStatus) {
  nlohmann::json document = Example("scale-up.json");
  Snapshot snapshot = Parsed(document);
  const Plan plan = PlanFor(snapshot);
  const PlanStep& scale = StepOf(plan, "ScaleStatefulSet");
  ASSERT_TRUE(scale.disruptive);
  auto gate_at = [&](const char* last) {
    document["etcd"]["status"]["lastOperation"]["lastDisruptiveStepTime"] = last;
    return GateControllerStep(scale, Parsed(document).document, PlanDigest(plan), snapshot.observed_at,
                              {false, std::chrono::seconds(60)});
  };
  EXPECT_TRUE(gate_at("2024-05-01T09:59:01Z").wait) << "59 s before the observation";
  EXPECT_FALSE(gate_at("2024-05-01T09:59:00Z").wait) << "60 s before";
  // A time that does not parse (a status edited by hand) holds the step and says why; before, it let it
  // through.
  const GateDecision garbled = gate_at("yesterday");
  EXPECT_TRUE(garbled.wait);
  EXPECT_NE(garbled.reason.find("\"yesterday\""), std::string::npos) << garbled.reason;
}

TEST_F(ControllerGatesTest, TheStatusSaysWhatWaitsAndIsNotWrittenAgainWhenItAlreadySaysIt) {
  Snapshot snapshot = Parsed(Example("quorum-lost.json"));
  const Plan plan = PlanFor(snapshot);
  const std::string digest = PlanDigest(plan);
  ExecutionReport report;
  report.state = "paused";
  report.paused_before = plan.steps.front().id;
  for (const PlanStep& step : plan.steps) {
    StepReport step_report;
    step_report.step_id = step.id;
    step_report.action = step.action;
    step_report.target = step.target;
    report.steps.push_back(step_report);
  }
  report.steps.front().message = "waiting: approval";
  const Value& etcd = *snapshot.document.Find("etcd");
  const DataLossBound bound = DataLossBoundOf(snapshot.document);
  const Value status =
      LastOperationStatus(etcd, plan, digest, report, bound, snapshot.observed_at, Value(), "run-1");
  ASSERT_TRUE(status.is_map());
  EXPECT_EQ(ValueAt(status, {"lastOperation", "type"})->string_value(), "Reconcile");
  EXPECT_EQ(ValueAt(status, {"lastOperation", "runID"})->string_value(), "run-1");
  EXPECT_EQ(ValueAt(status, {"lastOperation", "state"})->string_value(), "AwaitingApproval");
  EXPECT_EQ(ValueAt(status, {"lastOperation", "planDigest"})->string_value(), digest);
  EXPECT_EQ(ValueAt(status, {"lastOperation", "dataLossBound", "backupRevision"})->int_value(), 1051874);
  EXPECT_EQ(ValueAt(status, {"lastOperation", "steps", "next"})->string_value(), plan.steps.front().id);
  EXPECT_TRUE(ValueAt(status, {"lastErrors"})->list_value().empty());

  // The Etcd as it is after that write: a later reconcile (another run)
  // deciding the same writes nothing.
  nlohmann::json written = Example("quorum-lost.json");
  written["etcd"]["status"]["lastOperation"] =
      nlohmann::json::parse(FormatJson(*status.Find("lastOperation")));
  written["etcd"]["status"]["lastErrors"] = nlohmann::json::array();
  const Snapshot later = Parsed(written);
  auto one_second_later = AddDuration(snapshot.observed_at, Duration{1000000000});
  EXPECT_TRUE(LastOperationStatus(*later.document.Find("etcd"), plan, digest, report, bound,
                                  *one_second_later, Value(), "run-2")
                  .is_null());

  report.error = Error{ErrorCode::kConflict, "the StatefulSet changed", {}};
  const Value failed =
      LastOperationStatus(*later.document.Find("etcd"), plan, digest, report, bound, *one_second_later);
  ASSERT_TRUE(failed.is_map());
  EXPECT_EQ(ValueAt(failed, {"lastOperation", "state"})->string_value(), "Error");
  const Value::List& errors = ValueAt(failed, {"lastErrors"})->list_value();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(ValueAt(errors[0], {"code"})->string_value(), "ERR_CONFLICT");
}

// The status after a plan keeps the later of this run's own intent and the
// last disruptive step the status names (another run's, begun after this
// one observed), never rolling the time back: the minimum interval between
// disruptive steps is read from it.
TEST_F(ControllerGatesTest, TheStatusAfterAPlanKeepsTheLaterOfItsIntentAndTheStatussDisruptiveStep) {
  nlohmann::json document = Example("scale-up.json");
  const Snapshot snapshot = Parsed(document);
  const Plan plan = PlanFor(snapshot);
  const PlanStep& scale = StepOf(plan, "ScaleStatefulSet");
  const std::string digest = PlanDigest(plan);
  ExecutionReport report;
  report.state = "succeeded";
  auto at = [](const char* text) { return *ParseRfc3339(text); };
  const Value intent = DisruptiveStepIntent(scale, plan, digest, at("2024-05-01T10:00:00Z"));
  auto kept_with_status_at = [&](const char* status_time) {
    document["etcd"]["status"]["lastOperation"]["lastDisruptiveStepTime"] = status_time;
    document["etcd"]["status"]["lastOperation"]["lastDisruptiveStep"] = {{"id", "other"}};
    const Value status = LastOperationStatus(*Parsed(document).document.Find("etcd"), plan, digest, report,
                                             DataLossBound{}, at("2024-05-01T10:00:30Z"), intent);
    return ValueAt(status, {"lastOperation", "lastDisruptiveStepTime"})->string_value() + " " +
           ValueAt(status, {"lastOperation", "lastDisruptiveStep", "id"})->string_value();
  };
  EXPECT_EQ(kept_with_status_at("2024-05-01T10:00:20Z"), "2024-05-01T10:00:20Z other")
      << "a step begun after this run's intent is not rolled back";
  EXPECT_EQ(kept_with_status_at("2024-05-01T09:50:00Z"), "2024-05-01T10:00:00Z " + scale.id)
      << "an older time on a stale status gives way to the intent";
}

// A completed recovery's approval and marker are retired once the cluster is
// healthy: left in place, the approval approved a second quorum loss whose
// plan had the same digest (same pods, same backup revision) and the marker
// passed MarkRebootstrap's gate with the first incident's recorded scale.
TEST_F(ControllerGatesTest, TheApprovalAndTheMarkerAreRetiredOnceTheClusterIsHealthyAgain) {
  auto retired = [](nlohmann::json document) {
    return RetiredRecoveryAnnotations(*Parsed(document).document.Find("etcd"));
  };
  nlohmann::json healthy = Example("pink-of-health.json");
  EXPECT_TRUE(retired(healthy).is_null()) << "nothing to retire";
  healthy["etcd"]["metadata"]["annotations"]["ruleplane.dev/approve-plan"] = "sha256:first";
  healthy["etcd"]["metadata"]["annotations"]["ruleplane.dev/rebootstrap"] = "1051874:sha256:first";
  healthy["etcd"]["metadata"]["annotations"]["kept"] = "yes";
  EXPECT_EQ(FormatJson(retired(healthy)),
            R"({"ruleplane.dev/approve-plan":null,"ruleplane.dev/rebootstrap":null})");

  nlohmann::json one_down = healthy;
  one_down["etcd"]["status"]["members"][2]["status"] = "NotReady";
  EXPECT_TRUE(retired(one_down).is_null()) << "a member not Ready yet";
  nlohmann::json not_ready = healthy;
  not_ready["etcd"]["status"]["conditions"][1]["status"] = "False";
  EXPECT_TRUE(retired(not_ready).is_null()) << "AllMembersReady not True";

  // Right after the recovery's scale to 0: the status still calls every member Ready (their Leases have
  // not expired and no Pod is left to be unready), but no Pod is Ready (seen in the controller campaign).
  nlohmann::json scaled_to_zero = healthy;
  scaled_to_zero["etcd"]["status"]["readyReplicas"] = 0;
  EXPECT_TRUE(retired(scaled_to_zero).is_null()) << "no member Pod is Ready";
  scaled_to_zero["etcd"]["status"].erase("readyReplicas");
  EXPECT_TRUE(retired(scaled_to_zero).is_null()) << "the Pods' readiness not reported";

  nlohmann::json lost = Example("quorum-lost.json");
  lost["etcd"]["metadata"]["annotations"]["ruleplane.dev/approve-plan"] = "sha256:first";
  EXPECT_TRUE(retired(lost).is_null()) << "the incident is not over";
}

}  // namespace
}  // namespace ruleplane
