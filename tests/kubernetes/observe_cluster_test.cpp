// `ruleplane observe cluster`, `plan --cluster` and `apply` against a real
// kube-apiserver: DEP-01's minority-not-ready example (examples/snapshots)
// created as real objects (the Etcd, its StatefulSet, leases, pods and
// budget, with owner references and statuses, every time shifted so that the
// example's "now" is now), observed back through the API, and planned: the
// same decisions as the example file; then applied, dry and for real, and
// applied again: nothing repeated.
#include <gtest/gtest.h>

#include <ctime>
#include <fstream>
#include <set>
#include <sstream>

#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/manifests.h"
#include "adapters/kubernetes/object_fields.h"
#include "engine/common/json_value.h"
#include "engine/verify/conformance.h"
#include "observers/cluster_observer.h"
#include "observers/observed_shapes.h"
#include "tests/run_ruleplane.h"
#include "tests/support/kube_objects.h"
#include "tests/support/kube_test_bed.h"
#include "tests/support/source_paths.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {
namespace {

class ObserveCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<TempDir>("observe-cluster");
    auto bed = KubeTestBed::Start(dir_->path(), {.cluster = {.users = {"operator"}}});
    ASSERT_TRUE(bed.ok()) << bed.error().message;
    bed_ = std::move(*bed);
    kube_ = &bed_->kube();
    client_ = &bed_->admin();
  }

  std::string Example(const std::string& name) const { return ExamplePath(name); }

  // The example's objects created for real; returns the StatefulSet as stored.
  Value CreateExample(const std::string& example) {
    auto statefulset = CreateExampleObjects(*client_, example, log_);
    EXPECT_TRUE(statefulset.ok()) << statefulset.error().message;
    return statefulset.ok() ? *statefulset : Value::Null();
  }

  // examples/etcd.yaml applied by the admin (a new CRD takes a moment to be served).
  void ApplyExampleEtcd() {
    auto example = LoadManifests(std::string(SourceDir()) + "/examples/etcd.yaml");
    ASSERT_TRUE(example.ok()) << example.error().message;
    ASSERT_TRUE(Eventually([&] { return ApplyManifests(*client_, *example, "default", log_).ok(); },
                           std::chrono::seconds(10)));
  }

  // The user "operator" bound to the shipped Role (deploy/rbac.yaml), and
  // nothing else; returns a kubeconfig for it.
  std::string BindOperatorToShippedRole() {
    Status bound = bed_->BindToShippedRole("operator");
    EXPECT_TRUE(bound.ok()) << bound.error().message;
    return kube_->WriteKubeconfig("operator");
  }

  // A merge patch of the Etcd by someone else (the admin).
  void PatchEtcd(const std::string& subresource, const std::string& patch) {
    auto patched =
        client_->MergePatch({"druid.gardener.cloud/v1alpha1", "etcds", "default", "etcd-main", subresource},
                            *ParseJson(patch), log_);
    ASSERT_TRUE(patched.ok()) << patched.error().message;
  }

  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<KubeTestBed> bed_;
  KubeCluster* kube_ = nullptr;
  KubeClient* client_ = nullptr;
  RequestLog log_;
};

// The binary as a user runs it: its exit code, and what it printed (stdout, then stderr).
std::string RunRuleplane(const std::string& args, int& exit_code) {
  const testing_support::CommandResult run = testing_support::Ruleplane(args);
  exit_code = run.exit_code;
  return run.out + run.err;
}

// The states of the steps an `apply -o json` reports.
// The ids (rule set / rule / index) of the steps an `apply -o json` performed.
std::set<std::string> PerformedStepIds(const std::string& output) {
  std::set<std::string> ids;
  auto report = ParseJson(output);
  if (!report.ok()) return {"not JSON: " + output};
  for (const Value& step : ValueAt(*report, {"execution", "steps"})->list_value()) {
    if (ValueAt(step, {"state"})->string_value() == "succeeded")
      ids.insert(ValueAt(step, {"id"})->string_value());
  }
  return ids;
}

// That the second apply performed none of the steps the first performed (a
// step decided anew from the state the first left is allowed).
void ExpectNoStepRepeated(const std::string& first, const std::string& second) {
  const std::set<std::string> before = PerformedStepIds(first);
  EXPECT_FALSE(before.empty()) << first;
  for (const std::string& id : PerformedStepIds(second))
    EXPECT_EQ(before.count(id), 0u) << id << "\n" << second;
}

std::vector<std::string> StepStates(const std::string& output) {
  std::vector<std::string> states;
  auto report = ParseJson(output);
  if (!report.ok()) return {"not JSON: " + output};
  for (const Value& step : ValueAt(*report, {"execution", "steps"})->list_value()) {
    states.push_back(ValueAt(step, {"action"})->string_value() + " " +
                     ValueAt(step, {"target"})->string_value() + ": " +
                     ValueAt(step, {"state"})->string_value());
  }
  return states;
}

TEST_F(ObserveCluster, ALiveMinorityNotReadyClusterPlansAsTheExample) {
  const std::string example = Example("minority-not-ready.json");
  const Value statefulset = CreateExample(example);
  ASSERT_FALSE(HasFailure());

  // The snapshot read back has every object, as the API returned it.
  RequestLog reads;
  auto now = TimestampFromUnixSeconds(std::time(nullptr));
  ASSERT_TRUE(now.ok());
  auto live = ::ruleplane::ObserveCluster(*client_, "default", "etcd-main", *now, reads);
  ASSERT_TRUE(live.ok()) << live.error().message;
  EXPECT_EQ(ValueAt(live->document, {"leases"})->list_value().size(), 5u);
  EXPECT_EQ(ValueAt(live->document, {"pods"})->list_value().size(), 3u);
  EXPECT_EQ(ValueAt(live->document, {"statefulSet", "metadata", "uid"})->string_value(),
            ValueAt(statefulset, {"metadata", "uid"})->string_value());
  EXPECT_NE(ValueAt(live->document, {"podDisruptionBudget"}), nullptr);
  for (const Request& request : reads.requests()) EXPECT_FALSE(request.mutates) << DescribeRequest(request);
  // What the conformance check takes the controller's observer to write is what it writes.
  auto shape = ParseObservedShape(kClusterSnapshotShape);
  ASSERT_TRUE(shape.ok()) << shape.error().message;
  EXPECT_EQ(ShapeMismatches(live->document, *shape), std::vector<std::string>{});

  // `plan --cluster` decides what the example file decides.
  const std::string kubeconfig = kube_->WriteKubeconfig("admin");
  int exit_code = -1;
  const std::string from_file = RunRuleplane("plan " + example + " -o json", exit_code);
  ASSERT_EQ(exit_code, 0) << from_file;
  const std::string from_cluster =
      RunRuleplane("plan --cluster default/etcd-main --kubeconfig " + kubeconfig + " -o json", exit_code);
  ASSERT_EQ(exit_code, 0) << from_cluster;
  auto file_plan = ParseJson(from_file), cluster_plan = ParseJson(from_cluster);
  ASSERT_TRUE(file_plan.ok() && cluster_plan.ok()) << from_cluster;
  auto decisions = [](const Value& plan) {
    std::vector<std::string> lines;
    for (const Value& rule_set : ValueAt(plan, {"ruleSets"})->list_value()) {
      lines.push_back(ValueAt(rule_set, {"name"})->string_value() + ": " +
                      FormatJson(*ValueAt(rule_set, {"matchedRules"})));
    }
    for (const Value& step : ValueAt(plan, {"steps"})->list_value()) {
      lines.push_back(ValueAt(step, {"action"})->string_value() + " " +
                      ValueAt(step, {"target"})->string_value());
    }
    return lines;
  };
  EXPECT_EQ(decisions(*cluster_plan), decisions(*file_plan));
  EXPECT_NE(from_cluster.find("\"DeletePod\""), std::string::npos) << from_cluster;

  const std::string printed =
      RunRuleplane("observe cluster --kubeconfig " + kubeconfig + " -n default etcd-main", exit_code);
  ASSERT_EQ(exit_code, 0) << printed;
  auto observed = ParseJson(printed);
  ASSERT_TRUE(observed.ok()) << printed;
  EXPECT_EQ(TextAt(*observed, {"kind"}), "EtcdClusterSnapshot");
  EXPECT_EQ(ShapeMismatches(*observed, *shape), std::vector<std::string>{});
  // Every member Pod in maintenanceStatus, with why it did not answer: these Pods run nowhere.
  const Value* statuses = ValueAt(*observed, {"maintenanceStatus"});
  ASSERT_NE(statuses, nullptr) << printed;
  ASSERT_EQ(statuses->list_value().size(), 3u) << printed;
  for (const Value& status : statuses->list_value()) {
    EXPECT_EQ(ValueAt(status, {"response"}), nullptr) << FormatJson(status);
    EXPECT_NE(TextAt(status, {"error"}), "") << FormatJson(status);
  }
  const std::string missing =
      RunRuleplane("observe cluster --kubeconfig " + kubeconfig + " default/nope", exit_code);
  EXPECT_EQ(exit_code, 1) << missing;
  EXPECT_NE(missing.find("etcds nope in namespace default"), std::string::npos) << missing;
}

TEST_F(ObserveCluster, ApplyDeletesTheNotReadyPodOnceAndOnlyWhenAllowed) {
  CreateExample(Example("minority-not-ready.json"));
  ASSERT_FALSE(HasFailure());
  RequestLog log;
  const KubeResource pod{"v1", "pods", "default", "etcd-main-2", ""};
  const std::string common = "apply --cluster default/etcd-main --kubeconfig " +
                             kube_->WriteKubeconfig("admin") + " --journal " + dir_->path() + "/journal.db";
  int exit_code = -1;

  const std::string client_dry = RunRuleplane(common + " --dry-run=client --allow-disruptive", exit_code);
  EXPECT_EQ(exit_code, 0) << client_dry;
  EXPECT_NE(client_dry.find("DELETE " + kube_->server() + "/api/v1/namespaces/default/pods/etcd-main-2"),
            std::string::npos)
      << client_dry;
  const std::string refused = RunRuleplane(common, exit_code);
  EXPECT_EQ(exit_code, 1) << refused;
  EXPECT_NE(refused.find("refused: DeletePod is disruptive"), std::string::npos) << refused;
  const std::string server_dry = RunRuleplane(common + " --dry-run=server --allow-disruptive", exit_code);
  EXPECT_EQ(exit_code, 0) << server_dry;
  auto still = client_->Get(pod, log);
  ASSERT_TRUE(still.ok()) << "no dry run deletes the pod";
  EXPECT_EQ(ValueAt(*still, {"metadata", "deletionTimestamp"}), nullptr) << server_dry;

  const std::string applied = RunRuleplane(common + " --allow-disruptive -o json", exit_code);
  ASSERT_EQ(exit_code, 0) << applied;
  EXPECT_EQ(StepStates(applied), std::vector<std::string>{"DeletePod etcd-main-2: succeeded"});
  auto deleted = client_->Get(pod, log);
  EXPECT_TRUE(!deleted.ok() || ValueAt(*deleted, {"metadata", "deletionTimestamp"}) != nullptr)
      << "deleted (terminating: no kubelet here finishes it)";
  for (const char* other : {"etcd-main-0", "etcd-main-1"}) {
    auto kept = client_->Get({"v1", "pods", "default", other, ""}, log);
    ASSERT_TRUE(kept.ok()) << other;
    EXPECT_EQ(ValueAt(*kept, {"metadata", "deletionTimestamp"}), nullptr) << other;
  }

  const std::string again = RunRuleplane(common + " --allow-disruptive -o json", exit_code);
  ASSERT_EQ(exit_code, 0) << again;
  for (const std::string& state : StepStates(again))
    EXPECT_EQ(state.find("succeeded"), std::string::npos) << state;
}

// DEP-01's backup alert, executed: BackupReady False on a live Etcd plans
// RaiseAlert (backup-alert.yaml), which `apply` records as a Warning Event
// RuleplaneAlert on the Etcd carrying the rule's summary; a second apply finds
// it recorded and raises it again only after an hour.
TEST_F(ObserveCluster, ApplyRaisesTheBackupAlertAsOneWarningEvent) {
  CreateExample(Example("pdb-backup-not-ready.json"));
  ASSERT_FALSE(HasFailure());
  RequestLog log;
  const std::string common = "apply --cluster default/etcd-main --kubeconfig " +
                             kube_->WriteKubeconfig("admin") + " --journal " + dir_->path() +
                             "/journal.db -o json";
  int exit_code = -1;
  const std::string applied = RunRuleplane(common, exit_code);
  ASSERT_EQ(exit_code, 0) << applied;
  const std::vector<std::string> states = StepStates(applied);
  EXPECT_NE(std::find(states.begin(), states.end(), "RaiseAlert etcd-main: succeeded"), states.end())
      << applied;
  auto alerts = [&] {
    auto events = client_->List({"v1", "events", "default", "", ""}, "", log, "reason=RuleplaneAlert");
    return events.ok() ? ValueAt(*events, {"items"})->list_value() : Value::List{};
  };
  const Value::List raised = alerts();
  ASSERT_EQ(raised.size(), 1u) << applied;
  EXPECT_EQ(TextAt(raised[0], {"type"}), "Warning");
  EXPECT_EQ(TextAt(raised[0], {"involvedObject", "name"}), "etcd-main");
  EXPECT_NE(TextAt(raised[0], {"message"}).find("BackupReady is False"), std::string::npos)
      << TextAt(raised[0], {"message"});

  const std::string again = RunRuleplane(common, exit_code);
  ASSERT_EQ(exit_code, 0) << again;
  const std::vector<std::string> later = StepStates(again);
  EXPECT_NE(std::find(later.begin(), later.end(), "RaiseAlert etcd-main: skipped"), later.end()) << again;
  EXPECT_EQ(alerts().size(), 1u);
}

TEST_F(ObserveCluster, ApplyScalesUpWithLeasesAndBudgetAndASecondApplyRepeatsNothing) {
  CreateExample(Example("scale-up.json"));
  ASSERT_FALSE(HasFailure());
  // As the shipped Role allows, and no more: the user "operator" is bound to it.
  const std::string kubeconfig = BindOperatorToShippedRole();
  const std::string common = "apply --cluster default/etcd-main --kubeconfig " + kubeconfig + " --journal " +
                             dir_->path() + "/journal.db --allow-disruptive -o json";
  int exit_code = -1;
  const std::string applied = RunRuleplane(common, exit_code);
  ASSERT_EQ(exit_code, 0) << applied;
  const std::vector<std::string> states = StepStates(applied);
  EXPECT_NE(std::find(states.begin(), states.end(), "ScaleStatefulSet etcd-main: succeeded"), states.end())
      << applied;

  RequestLog log;
  auto statefulset = client_->Get({"apps/v1", "statefulsets", "default", "etcd-main", ""}, log);
  ASSERT_TRUE(statefulset.ok());
  EXPECT_EQ(ValueAt(*statefulset, {"spec", "replicas"})->int_value(), 5);
  for (const char* lease : {"etcd-main-3", "etcd-main-4"}) {
    EXPECT_TRUE(client_->Get({"coordination.k8s.io/v1", "leases", "default", lease, ""}, log).ok()) << lease;
  }
  auto budget = client_->Get({"policy/v1beta1", "poddisruptionbudgets", "default", "etcd-main", ""}, log);
  ASSERT_TRUE(budget.ok());
  EXPECT_EQ(ValueAt(*budget, {"spec", "minAvailable"})->int_value(), 3);

  const std::string again = RunRuleplane(common, exit_code);
  ASSERT_EQ(exit_code, 0) << again;
  for (const std::string& state : StepStates(again))
    EXPECT_EQ(state.find("succeeded"), std::string::npos) << state;
}

TEST_F(ObserveCluster, AnObjectChangedSinceTheObservationIsAConflictAndARerunReobserves) {
  CreateExample(Example("scale-up.json"));
  ASSERT_FALSE(HasFailure());
  const std::string kubeconfig = kube_->WriteKubeconfig("admin");
  int exit_code = -1;
  const std::string observed =
      RunRuleplane("observe cluster --kubeconfig " + kubeconfig + " default/etcd-main", exit_code);
  ASSERT_EQ(exit_code, 0) << observed;
  const std::string stale = dir_->path() + "/stale.json";
  std::ofstream(stale) << observed;

  // Someone writes the StatefulSet after the observation (an annotation: the
  // decision stays the same, the resourceVersion does not).
  const KubeResource statefulset{"apps/v1", "statefulsets", "default", "etcd-main", ""};
  auto changed = client_->MergePatch(
      statefulset, *ParseJson(R"({"metadata":{"annotations":{"touched-by":"someone-else"}}})"), log_);
  ASSERT_TRUE(changed.ok()) << changed.error().message;

  const std::string common =
      "--kubeconfig " + kubeconfig + " --journal " + dir_->path() + "/journal.db --allow-disruptive -o json";
  const std::string conflict = RunRuleplane("apply " + stale + " " + common, exit_code);
  EXPECT_EQ(exit_code, 1) << conflict;
  EXPECT_NE(conflict.find("Conflict"), std::string::npos) << conflict;
  EXPECT_EQ(ValueAt(*client_->Get(statefulset, log_), {"spec", "replicas"})->int_value(), 3)
      << "the fenced write changed nothing";

  const std::string rerun = RunRuleplane("apply --cluster default/etcd-main " + common, exit_code);
  ASSERT_EQ(exit_code, 0) << rerun;
  EXPECT_EQ(ValueAt(*client_->Get(statefulset, log_), {"spec", "replicas"})->int_value(), 5)
      << "re-observed, re-planned";
}

TEST_F(ObserveCluster, ApplyStatefulSetSpecRollsTheSpecChangeOutOnceUnderTheShippedRole) {
  CreateExample(Example("maintenance-rolling-update.json"));
  ASSERT_FALSE(HasFailure());
  // A spec change: generation 2, applied so far: 1.
  PatchEtcd("status", R"({"status":{"observedGeneration":1}})");
  // Peer TLS set on a running Etcd (etcd-druid issues 420, 886) changes the configuration too.
  PatchEtcd("", R"({"spec":{"backup":{"image":"example.org/ruleplane:v2"},
                             "etcd":{"resources":{"requests":{"cpu":"700m"}},
                                     "peerUrlTls":{"tlsCASecretRef":{"name":"etcd-peer-ca","dataKey":"ca.crt"},
                                                   "serverTLSSecretRef":{"name":"etcd-peer-server-tls"}}}}})");
  // (The example's StatefulSet is etcd-druid's: its own pod template is kept, with the spec's images and
  // resources merged in; CreateStatefulSetDoesNotTakeOneRenderedFromAnOlderSpecAsDone renders one of
  // ruleplane's.)
  const std::string common = "apply --cluster default/etcd-main --kubeconfig " + BindOperatorToShippedRole() +
                             " --journal " + dir_->path() + "/journal.db -o json";
  int exit_code = -1;
  const std::string refused = RunRuleplane(common, exit_code);
  EXPECT_EQ(exit_code, 1) << refused;
  EXPECT_NE(refused.find("ApplyStatefulSetSpec is disruptive"), std::string::npos) << refused;

  const std::string applied = RunRuleplane(common + " --allow-disruptive", exit_code);
  ASSERT_EQ(exit_code, 0) << applied;
  // (The example has no Services or members' ServiceAccount as real objects: they are created too.)
  EXPECT_EQ(StepStates(applied),
            (std::vector<std::string>{
                "ApplyEtcdConfigMap etcd-main: succeeded", "ApplyEtcdServices etcd-main: succeeded",
                "ApplyEtcdMemberAccess etcd-main: succeeded", "ApplyStatefulSetSpec etcd-main: succeeded"}));
  auto statefulset = client_->Get({"apps/v1", "statefulsets", "default", "etcd-main", ""}, log_);
  ASSERT_TRUE(statefulset.ok());
  const Value::List& containers =
      ValueAt(*statefulset, {"spec", "template", "spec", "containers"})->list_value();
  ASSERT_EQ(containers.size(), 2u);
  EXPECT_EQ(ValueAt(containers[0], {"resources", "requests", "cpu"})->string_value(), "700m");
  EXPECT_EQ(ValueAt(containers[1], {"image"})->string_value(), "example.org/ruleplane:v2");
  EXPECT_EQ(ValueAt(*statefulset, {"spec", "template", "spec", "priorityClassName"})->string_value(),
            "gardener-system-500");
  auto etcd = client_->Get({"druid.gardener.cloud/v1alpha1", "etcds", "default", "etcd-main", ""}, log_);
  ASSERT_TRUE(etcd.ok());
  EXPECT_EQ(ValueAt(*etcd, {"status", "observedGeneration"})->int_value(), 2);
  auto config_map = client_->Get({"v1", "configmaps", "default", EtcdConfigMapName(*etcd), ""}, log_);
  ASSERT_TRUE(config_map.ok()) << config_map.error().message;
  const std::string config = ValueAt(*config_map, {"data", "etcd.conf.yaml"})->string_value();
  EXPECT_TRUE(Contains(config, "peer-transport-security")) << config;
  EXPECT_TRUE(Contains(config, "https://0.0.0.0:2380")) << config;

  const std::string again = RunRuleplane(common + " --allow-disruptive", exit_code);
  ASSERT_EQ(exit_code, 0) << again;
  EXPECT_EQ(StepStates(again), std::vector<std::string>{}) << "up to date: nothing decided";
}

// A plan that creates the StatefulSet, made from an observation that did not
// see it yet (a watch cache behind, or a run before a crash), for a newer
// spec than the StatefulSet was rendered from: the existing StatefulSet is not
// taken as created, observedGeneration stays, and a fresh observation plans
// the spec change (ApplyStatefulSetSpec).
TEST_F(ObserveCluster, CreateStatefulSetDoesNotTakeOneRenderedFromAnOlderSpecAsDone) {
  ASSERT_NO_FATAL_FAILURE(ApplyExampleEtcd());
  const std::string kubeconfig = kube_->WriteKubeconfig("admin");
  const std::string common =
      "--kubeconfig " + kubeconfig + " --journal " + dir_->path() + "/journal.db -o json";
  int exit_code = -1;
  const std::string created = RunRuleplane("apply --cluster default/etcd-main " + common, exit_code);
  ASSERT_EQ(exit_code, 0) << created;
  const KubeResource statefulset{"apps/v1", "statefulsets", "default", "etcd-main", ""};
  const KubeResource etcd{"druid.gardener.cloud/v1alpha1", "etcds", "default", "etcd-main", ""};
  ASSERT_TRUE(client_->Get(statefulset, log_).ok()) << created;
  auto generation_of = [&](std::initializer_list<std::string_view> path) {
    auto object = client_->Get(etcd, log_);
    const Value* value = object.ok() ? ValueAt(*object, path) : nullptr;
    return value != nullptr && value->is_int() ? value->int_value() : -1;
  };
  ASSERT_EQ(generation_of({"status", "observedGeneration"}), 1);

  // The spec changes (generation 2: peer TLS set); an observation without the StatefulSet plans
  // CreateStatefulSet again.
  PatchEtcd("", R"({"spec":{"etcd":{"resources":{"requests":{"cpu":"700m"}},
                             "peerUrlTls":{"tlsCASecretRef":{"name":"etcd-peer-ca"},
                                           "serverTLSSecretRef":{"name":"etcd-peer-server-tls"}}}}})");
  ASSERT_EQ(generation_of({"metadata", "generation"}), 2);
  const std::string observed =
      RunRuleplane("observe cluster --kubeconfig " + kubeconfig + " default/etcd-main", exit_code);
  ASSERT_EQ(exit_code, 0) << observed;
  auto snapshot = ParseJson(observed);
  ASSERT_TRUE(snapshot.ok()) << observed;
  Value::Map without;
  for (const auto& [key, value] : snapshot->map_value()) {
    if (!(key.is_string() && key.string_value() == "statefulSet")) without.emplace_back(key, value);
  }
  const std::string behind = dir_->path() + "/behind.json";
  std::ofstream(behind) << FormatJson(Value::MakeMap(std::move(without)));
  const std::string again = RunRuleplane("apply " + behind + " " + common, exit_code);
  EXPECT_NE(again.find("rendered from generation 1"), std::string::npos) << again;
  EXPECT_EQ(exit_code, 1) << "a conflict: re-observe\n" << again;
  EXPECT_EQ(generation_of({"status", "observedGeneration"}), 1)
      << "the spec change is not claimed as applied";

  // Observed again (the StatefulSet seen), with a healthy cluster: the change is planned.
  PatchEtcd("status", R"({"status":{"conditions":[
      {"type":"AllMembersReady","status":"True","reason":"AllMembersReady","message":"ok"},
      {"type":"BackupReady","status":"True","reason":"BackupReady","message":"ok"}]}})");
  const std::string planned = RunRuleplane("plan --cluster default/etcd-main --kubeconfig " + kubeconfig +
                                               " --rules etcd-druid-status-maintenance@1 -o json",
                                           exit_code);
  EXPECT_NE(planned.find("ApplyStatefulSetSpec"), std::string::npos) << planned;

  // Applied: the configuration, then the StatefulSet ruleplane rendered, rendered again from the new spec:
  // the peer Secrets mounted into etcd, and member-init given the member's https peer URL.
  const std::string applied = RunRuleplane(
      "apply --cluster default/etcd-main --rules etcd-druid-status-maintenance@1 "
      "--allow-disruptive " +
          common,
      exit_code);
  ASSERT_EQ(exit_code, 0) << applied;
  // (The configuration is current already: the apply of the stale observation wrote it, for the spec it saw.)
  EXPECT_EQ(StepStates(applied),
            (std::vector<std::string>{
                "ApplyEtcdConfigMap etcd-main: skipped", "ApplyEtcdServices etcd-main: skipped",
                "ApplyEtcdMemberAccess etcd-main: skipped", "ApplyStatefulSetSpec etcd-main: succeeded"}));
  auto etcd_object = client_->Get(etcd, log_);
  ASSERT_TRUE(etcd_object.ok());
  auto config_map = client_->Get({"v1", "configmaps", "default", EtcdConfigMapName(*etcd_object), ""}, log_);
  ASSERT_TRUE(config_map.ok());
  EXPECT_TRUE(
      Contains(ValueAt(*config_map, {"data", "etcd.conf.yaml"})->string_value(), "peer-transport-security"));
  auto rendered = client_->Get(statefulset, log_);
  ASSERT_TRUE(rendered.ok());
  const std::string pod = FormatJson(*ValueAt(*rendered, {"spec", "template", "spec"}));
  EXPECT_TRUE(Contains(pod, R"("secretName":"etcd-peer-server-tls")")) << pod;
  EXPECT_TRUE(Contains(pod, "--peer-url=https://$(POD_NAME).etcd-main-peer.default.svc:2380")) << pod;
  EXPECT_EQ(generation_of({"status", "observedGeneration"}), 2);
}

// A StatefulSet of the Etcd's name that it does not own (created by someone
// else, or orphaned) is someone's members' data: never taken over. The
// error says how to hand it over; with the ownerReference given, it is the
// Etcd's and no StatefulSet is created.
TEST_F(ObserveCluster, AStatefulSetTheEtcdDoesNotOwnIsNotTakenOver) {
  ASSERT_NO_FATAL_FAILURE(ApplyExampleEtcd());
  const KubeResource statefulset{"apps/v1", "statefulsets", "default", "etcd-main", ""};
  auto foreign = ParseJson(R"({"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"etcd-main"},
      "spec":{"replicas":1,"serviceName":"etcd-main-peer","selector":{"matchLabels":{"app":"theirs"}},
        "template":{"metadata":{"labels":{"app":"theirs"}},
                    "spec":{"containers":[{"name":"etcd","image":"theirs:1"}]}}}})");
  ASSERT_TRUE(foreign.ok());
  auto created = client_->Create({"apps/v1", "statefulsets", "default", "", ""}, *foreign, log_);
  ASSERT_TRUE(created.ok()) << created.error().message;
  const std::string apply = "apply --cluster default/etcd-main --kubeconfig " + BindOperatorToShippedRole() +
                            " --journal " + dir_->path() + "/journal.db -o json";
  int exit_code = -1;
  const std::string refused = RunRuleplane(apply, exit_code);
  EXPECT_EQ(exit_code, 1) << refused;
  EXPECT_TRUE(Contains(refused, "a StatefulSet etcd-main exists that the Etcd does not own")) << refused;
  auto theirs = client_->Get(statefulset, log_);
  ASSERT_TRUE(theirs.ok());
  EXPECT_EQ(FieldText(*theirs, {"metadata", "resourceVersion"}),
            FieldText(*created, {"metadata", "resourceVersion"}))
      << "their StatefulSet was written";
  auto etcd = client_->Get({"druid.gardener.cloud/v1alpha1", "etcds", "default", "etcd-main", ""}, log_);
  ASSERT_TRUE(etcd.ok());
  EXPECT_EQ(ValueAt(*etcd, {"status", "observedGeneration"}), nullptr);

  // Handed over: owned by the Etcd, it is observed as the Etcd's; none is created.
  auto handed_over =
      ParseJson(R"({"metadata":{"ownerReferences":[{"apiVersion":"druid.gardener.cloud/v1alpha1",)"
                R"("kind":"Etcd","name":"etcd-main","uid":")" +
                FieldText(*etcd, {"metadata", "uid"}) + R"("}]}})");
  ASSERT_TRUE(handed_over.ok());
  ASSERT_TRUE(client_->MergePatch(statefulset, *handed_over, log_).ok());
  ASSERT_TRUE(Eventually(
      [&] {
        const std::string adopted = RunRuleplane(apply, exit_code);
        return exit_code == 0 && !Contains(adopted, "CreateStatefulSet");
      },
      std::chrono::seconds(10)))
      << RunRuleplane(apply, exit_code);
}

// The members' RoleBinding, created first by someone else: it binds their
// ServiceAccount to the members' Role (the members' Leases, the Etcd's
// status). Not taken as the Etcd's own, nor patched: the plan stops there.
// Handed over (an ownerReference to the Etcd), its subjects become the
// members' ServiceAccount alone. Before, a RoleBinding of that name counted
// as applied whatever it bound (only a Role's rules were compared).
TEST_F(ObserveCluster, AMembersRoleBindingTheEtcdDoesNotOwnIsNotTakenOver) {
  ASSERT_NO_FATAL_FAILURE(ApplyExampleEtcd());
  const KubeResource binding{"rbac.authorization.k8s.io/v1", "rolebindings", "default",
                             "druid.gardener.cloud:etcd:etcd-main", ""};
  auto foreign = ParseJson(R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding",
      "metadata":{"name":"druid.gardener.cloud:etcd:etcd-main"},
      "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"druid.gardener.cloud:etcd:etcd-main"},
      "subjects":[{"kind":"ServiceAccount","name":"stranger","namespace":"default"}]})");
  ASSERT_TRUE(foreign.ok());
  auto created =
      client_->Create({"rbac.authorization.k8s.io/v1", "rolebindings", "default", "", ""}, *foreign, log_);
  ASSERT_TRUE(created.ok()) << created.error().message;
  const std::string apply = "apply --cluster default/etcd-main --kubeconfig " + BindOperatorToShippedRole() +
                            " --journal " + dir_->path() + "/journal.db -o json";
  int exit_code = -1;
  const std::string refused = RunRuleplane(apply, exit_code);
  EXPECT_EQ(exit_code, 1) << refused;
  EXPECT_TRUE(Contains(refused,
                       "a RoleBinding druid.gardener.cloud:etcd:etcd-main exists that the Etcd does not own"))
      << refused;
  auto theirs = client_->Get(binding, log_);
  ASSERT_TRUE(theirs.ok());
  EXPECT_EQ(FieldText(*theirs, {"metadata", "resourceVersion"}),
            FieldText(*created, {"metadata", "resourceVersion"}))
      << "their RoleBinding was written";

  auto etcd = client_->Get({"druid.gardener.cloud/v1alpha1", "etcds", "default", "etcd-main", ""}, log_);
  ASSERT_TRUE(etcd.ok());
  auto handed_over =
      ParseJson(R"({"metadata":{"ownerReferences":[{"apiVersion":"druid.gardener.cloud/v1alpha1",)"
                R"("kind":"Etcd","name":"etcd-main","uid":")" +
                FieldText(*etcd, {"metadata", "uid"}) + R"("}]}})");
  ASSERT_TRUE(handed_over.ok());
  ASSERT_TRUE(client_->MergePatch(binding, *handed_over, log_).ok());
  const std::string applied = RunRuleplane(apply, exit_code);
  ASSERT_EQ(exit_code, 0) << applied;
  auto ours = client_->Get(binding, log_);
  ASSERT_TRUE(ours.ok());
  EXPECT_EQ(FormatJson(*ValueAt(*ours, {"subjects"})),
            R"([{"kind":"ServiceAccount","name":"etcd-main","namespace":"default"}])");
}

// The rest of what etcd-druid renders follows the spec too: the client
// Service takes the labels and annotations given later, an affinity taken
// out leaves the pod template (the merge patch names it null), and a changed
// quota changes the configuration checksum, which rolls the members.
TEST_F(ObserveCluster, ASpecChangeReachesTheClientServiceTakesTheAffinityOutAndChangesTheChecksum) {
  ASSERT_NO_FATAL_FAILURE(ApplyExampleEtcd());
  PatchEtcd("", R"({"spec":{"storageClass":"fast","schedulingConstraints":{"affinity":{"podAntiAffinity":{
      "preferredDuringSchedulingIgnoredDuringExecution":[{"weight":100,"podAffinityTerm":{
        "topologyKey":"kubernetes.io/hostname","labelSelector":{"matchLabels":{"instance":"etcd-main"}}}}]}}}}})");
  const std::string common = "--kubeconfig " + BindOperatorToShippedRole() + " --journal " + dir_->path() +
                             "/journal.db --allow-disruptive -o json";
  int exit_code = -1;
  const std::string created = RunRuleplane("apply --cluster default/etcd-main " + common, exit_code);
  ASSERT_EQ(exit_code, 0) << created;
  const KubeResource statefulset{"apps/v1", "statefulsets", "default", "etcd-main", ""};
  const KubeResource client_service{"v1", "services", "default", "etcd-main-client", ""};
  auto first = client_->Get(statefulset, log_);
  ASSERT_TRUE(first.ok()) << created;
  EXPECT_NE(ValueAt(*first, {"spec", "template", "spec", "affinity", "podAntiAffinity"}), nullptr);
  EXPECT_EQ(FieldText(*ValueAt(*first, {"spec", "volumeClaimTemplates"})->list_value()[0].Find("spec"),
                      {"storageClassName"}),
            "fast");
  const std::string first_checksum =
      FieldText(*first, {"spec", "template", "metadata", "annotations", kConfigChecksumAnnotation});
  EXPECT_FALSE(first_checksum.empty());

  PatchEtcd("", R"({"spec":{"schedulingConstraints":null,"etcd":{"quota":"12Gi",
      "clientService":{"labels":{"networking.gardener.cloud/to-etcd":"allowed"},
                       "annotations":{"service.kubernetes.io/topology-mode":"auto"}}}}})");
  PatchEtcd("status", R"({"status":{"conditions":[
      {"type":"AllMembersReady","status":"True","reason":"AllMembersReady","message":"ok"},
      {"type":"BackupReady","status":"True","reason":"BackupReady","message":"ok"}]}})");
  const std::string applied = RunRuleplane(
      "apply --cluster default/etcd-main --rules etcd-druid-status-maintenance@1 " + common, exit_code);
  ASSERT_EQ(exit_code, 0) << applied;
  EXPECT_EQ(StepStates(applied),
            (std::vector<std::string>{
                "ApplyEtcdConfigMap etcd-main: succeeded", "ApplyEtcdServices etcd-main: succeeded",
                "ApplyEtcdMemberAccess etcd-main: skipped", "ApplyStatefulSetSpec etcd-main: succeeded"}));
  auto service = client_->Get(client_service, log_);
  ASSERT_TRUE(service.ok());
  EXPECT_EQ(FieldText(*service, {"metadata", "labels", "networking.gardener.cloud/to-etcd"}), "allowed");
  EXPECT_EQ(FieldText(*service, {"metadata", "labels", "instance"}), "etcd-main");
  EXPECT_EQ(FieldText(*service, {"metadata", "annotations", "service.kubernetes.io/topology-mode"}), "auto");
  auto second = client_->Get(statefulset, log_);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(ValueAt(*second, {"spec", "template", "spec", "affinity"}), nullptr)
      << FormatJson(*ValueAt(*second, {"spec", "template", "spec"}));
  const std::string second_checksum =
      FieldText(*second, {"spec", "template", "metadata", "annotations", kConfigChecksumAnnotation});
  EXPECT_FALSE(second_checksum.empty());
  EXPECT_NE(second_checksum, first_checksum) << "the quota changed the configuration";

  // A label the spec drops is taken off; one someone else set stays.
  auto foreign =
      client_->MergePatch(client_service, *ParseJson(R"({"metadata":{"labels":{"team":"storage"}}})"), log_);
  ASSERT_TRUE(foreign.ok()) << foreign.error().message;
  PatchEtcd("", R"({"spec":{"etcd":{"clientService":{"labels":null}}}})");
  const std::string dropped = RunRuleplane(
      "apply --cluster default/etcd-main --rules etcd-druid-status-maintenance@1 " + common, exit_code);
  ASSERT_EQ(exit_code, 0) << dropped;
  service = client_->Get(client_service, log_);
  ASSERT_TRUE(service.ok());
  EXPECT_EQ(ValueAt(*service, {"metadata", "labels", "networking.gardener.cloud/to-etcd"}), nullptr)
      << FormatJson(*ValueAt(*service, {"metadata"}));
  EXPECT_EQ(FieldText(*service, {"metadata", "labels", "team"}), "storage");
  EXPECT_EQ(FieldText(*service, {"metadata", "labels", "instance"}), "etcd-main");
  EXPECT_EQ(FieldText(*service, {"metadata", "annotations", "service.kubernetes.io/topology-mode"}), "auto");
}

// Under today's rules a spec change is part of the spec reconcile, which
// runs only when asked: without the operation annotation nothing of it is
// applied; with it, the configuration, the client Service and the pod
// template follow (observedGeneration recorded), and the next reconcile
// removes the annotation.
TEST_F(ObserveCluster, UnderTodaysRulesASpecChangeWaitsForTheOperationAnnotationAndIsThenApplied) {
  ASSERT_NO_FATAL_FAILURE(ApplyExampleEtcd());
  const std::string apply =
      "apply --cluster default/etcd-main --rules etcd-druid@2 --rules etcd-druid-components@1 "
      "--kubeconfig " +
      BindOperatorToShippedRole() + " --journal " + dir_->path() + "/journal.db --allow-disruptive -o json";
  int exit_code = -1;
  const std::string created = RunRuleplane(apply, exit_code);
  ASSERT_EQ(exit_code, 0) << created;
  const KubeResource etcd{"druid.gardener.cloud/v1alpha1", "etcds", "default", "etcd-main", ""};
  const KubeResource statefulset{"apps/v1", "statefulsets", "default", "etcd-main", ""};
  auto checksum = [&] {
    auto object = client_->Get(statefulset, log_);
    return object.ok() ? FieldText(*object,
                                   {"spec", "template", "metadata", "annotations", kConfigChecksumAnnotation})
                       : "";
  };
  const std::string first_checksum = checksum();
  ASSERT_FALSE(first_checksum.empty()) << created;

  PatchEtcd(
      "",
      R"({"spec":{"etcd":{"quota":"12Gi","clientService":{"labels":{"networking.gardener.cloud/to-etcd":"allowed"}}}}})");
  const std::string waiting = RunRuleplane(apply, exit_code);
  ASSERT_EQ(exit_code, 0) << waiting;
  EXPECT_FALSE(Contains(waiting, "ApplyStatefulSetSpec")) << waiting;
  EXPECT_EQ(checksum(), first_checksum);
  auto before = client_->Get(etcd, log_);
  ASSERT_TRUE(before.ok());
  const int64_t generation = FieldInt(*before, {"metadata", "generation"}, 0);
  EXPECT_LT(FieldInt(*before, {"status", "observedGeneration"}, 0), generation);

  PatchEtcd("", R"({"metadata":{"annotations":{"druid.gardener.cloud/operation":"reconcile"}}})");
  const std::string applied = RunRuleplane(apply, exit_code);
  ASSERT_EQ(exit_code, 0) << applied;
  const std::vector<std::string> states = StepStates(applied);
  for (const char* step :
       {"ApplyEtcdConfigMap etcd-main: succeeded", "ApplyEtcdServices etcd-main: succeeded",
        "ApplyStatefulSetSpec etcd-main: succeeded"})
    EXPECT_NE(std::find(states.begin(), states.end(), step), states.end()) << step << "\n" << applied;
  EXPECT_NE(checksum(), first_checksum) << "the quota changed the configuration";
  auto service = client_->Get({"v1", "services", "default", "etcd-main-client", ""}, log_);
  ASSERT_TRUE(service.ok());
  EXPECT_EQ(FieldText(*service, {"metadata", "labels", "networking.gardener.cloud/to-etcd"}), "allowed");
  auto after = client_->Get(etcd, log_);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(FieldInt(*after, {"status", "observedGeneration"}, 0), generation);

  const std::string completed = RunRuleplane(apply, exit_code);
  ASSERT_EQ(exit_code, 0) << completed;
  const std::vector<std::string> last = StepStates(completed);
  EXPECT_NE(std::find(last.begin(), last.end(), "RemoveOperationAnnotation etcd-main: succeeded"), last.end())
      << completed;
  EXPECT_FALSE(Contains(completed, "ApplyStatefulSetSpec")) << completed;
  auto done = client_->Get(etcd, log_);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(ValueAt(*done, {"metadata", "annotations", "druid.gardener.cloud/operation"}), nullptr);
}

// Today's etcd-druid scales only when asked (the Etcd was reconciled
// before: status.observedGeneration): the example has Gardener's
// gardener.cloud/operation: reconcile, which the next plan removes once the
// StatefulSet has the replicas.
TEST_F(ObserveCluster, ApplyOfTheV2ScaleUpWritesTheEtcdConfigMapForFiveMembersOnce) {
  CreateExample(Example("v2-scale-up.json"));
  ASSERT_FALSE(HasFailure());
  const std::string common = "apply --cluster default/etcd-main --rules etcd-druid@2 --kubeconfig " +
                             BindOperatorToShippedRole() + " --journal " + dir_->path() +
                             "/journal.db --allow-disruptive -o json";
  int exit_code = -1;
  const std::string applied = RunRuleplane(common, exit_code);
  ASSERT_EQ(exit_code, 0) << applied;
  const std::vector<std::string> states = StepStates(applied);
  EXPECT_NE(std::find(states.begin(), states.end(), "ApplyEtcdConfigMap etcd-main: succeeded"), states.end())
      << applied;
  auto etcd = client_->Get({"druid.gardener.cloud/v1alpha1", "etcds", "default", "etcd-main", ""}, log_);
  ASSERT_TRUE(etcd.ok());
  auto config_map = client_->Get({"v1", "configmaps", "default", EtcdConfigMapName(*etcd), ""}, log_);
  ASSERT_TRUE(config_map.ok()) << config_map.error().message;
  EXPECT_EQ(InitialClusterSize(*config_map), 5);
  EXPECT_EQ(ValueAt(*config_map, {"metadata", "ownerReferences"})->list_value().size(), 1u);

  const std::string again = RunRuleplane(common, exit_code);
  ASSERT_EQ(exit_code, 0) << again;
  ExpectNoStepRepeated(applied, again);
  const std::vector<std::string> completed = StepStates(again);
  EXPECT_NE(std::find(completed.begin(), completed.end(), "RemoveOperationAnnotation etcd-main: succeeded"),
            completed.end())
      << again;
  etcd = client_->Get({"druid.gardener.cloud/v1alpha1", "etcds", "default", "etcd-main", ""}, log_);
  ASSERT_TRUE(etcd.ok());
  EXPECT_EQ(ValueAt(*etcd, {"metadata", "annotations", "gardener.cloud/operation"}), nullptr)
      << FormatJson(*etcd);

  // Without the annotation, a changed spec.replicas waits.
  PatchEtcd("", R"({"spec":{"replicas":7}})");
  const std::string waiting = RunRuleplane(common, exit_code);
  ASSERT_EQ(exit_code, 0) << waiting;
  EXPECT_FALSE(Contains(waiting, "ScaleStatefulSet")) << waiting;
  auto statefulset = client_->Get({"apps/v1", "statefulsets", "default", "etcd-main", ""}, log_);
  ASSERT_TRUE(statefulset.ok());
  EXPECT_EQ(ValueAt(*statefulset, {"spec", "replicas"})->int_value(), 5);
}

// Issue 23, hazard 4: a plan made from an observation of spec.replicas 5,
// applied after the owner set it back to 3, wrote the 5-member ConfigMap and
// scaled the StatefulSet (both fenced only by their own resourceVersions).
// Writes to the Etcd's objects rest on the Etcd's spec as observed.
TEST_F(ObserveCluster, APlanFromAnObservationOfAnOlderSpecWritesNothing) {
  CreateExample(Example("v2-scale-up.json"));
  ASSERT_FALSE(HasFailure());
  const std::string kubeconfig = BindOperatorToShippedRole();
  int exit_code = -1;
  const std::string observed =
      RunRuleplane("observe cluster --kubeconfig " + kubeconfig + " default/etcd-main", exit_code);
  ASSERT_EQ(exit_code, 0) << observed;
  const std::string stale = dir_->path() + "/stale.json";
  std::ofstream(stale) << observed;
  PatchEtcd("", R"({"spec":{"replicas":3}})");

  const std::string applied =
      RunRuleplane("apply " + stale + " --rules etcd-druid-status-scaling@2 --kubeconfig " + kubeconfig +
                       " --journal " + dir_->path() + "/journal.db --allow-disruptive -o json",
                   exit_code);
  EXPECT_EQ(exit_code, 1) << applied;
  EXPECT_NE(applied.find("the Etcd's spec changed since the plan's observation"), std::string::npos)
      << applied;
  auto etcd = client_->Get({"druid.gardener.cloud/v1alpha1", "etcds", "default", "etcd-main", ""}, log_);
  ASSERT_TRUE(etcd.ok());
  auto config_map = client_->Get({"v1", "configmaps", "default", EtcdConfigMapName(*etcd), ""}, log_);
  EXPECT_FALSE(config_map.ok()) << "the 5-member ConfigMap was written";
  auto statefulset = client_->Get({"apps/v1", "statefulsets", "default", "etcd-main", ""}, log_);
  ASSERT_TRUE(statefulset.ok());
  EXPECT_EQ(ValueAt(*statefulset, {"spec", "replicas"})->int_value(), 3) << "scaled on a stale decision";
}

// The three status actions no scenario elsewhere performs: a maintenance
// postponed (a Normal Event MaintenancePostponed, once), status.ready
// written by today's status table, and a condition removed (BackupReady on
// an Etcd whose backup store was taken away).
TEST_F(ObserveCluster, APostponementStatusReadyAndARemovedConditionTakeEffect) {
  CreateExample(Example("maintenance-postponed.json"));
  ASSERT_FALSE(HasFailure());
  // The API server numbers generations from 1: the spec this Etcd has is not applied yet.
  PatchEtcd("status", R"({"status":{"observedGeneration":0}})");
  RequestLog log;
  const std::string common = "apply --cluster default/etcd-main --kubeconfig " +
                             kube_->WriteKubeconfig("admin") + " --journal " + dir_->path() +
                             "/journal.db -o json";
  int exit_code = -1;
  const std::string postponed = RunRuleplane(common, exit_code);
  ASSERT_EQ(exit_code, 0) << postponed;
  const std::vector<std::string> states = StepStates(postponed);
  EXPECT_NE(std::find(states.begin(), states.end(), "PostponeMaintenance etcd-main: succeeded"), states.end())
      << postponed;
  auto events = client_->List({"v1", "events", "default", "", ""}, "", log, "reason=MaintenancePostponed");
  ASSERT_TRUE(events.ok());
  const Value::List recorded = FieldList(*events, {"items"});
  ASSERT_EQ(recorded.size(), 1u) << postponed;
  const Value& event = recorded[0];
  EXPECT_EQ(TextAt(event, {"type"}), "Normal");
  EXPECT_NE(
      TextAt(event, {"message"}).find("StatefulSetSpecUpdate: AllMembersReady is False; generation 1 waits"),
      std::string::npos)
      << TextAt(event, {"message"});

  const KubeResource etcd{"druid.gardener.cloud/v1alpha1", "etcds", "default", "etcd-main", ""};
  const std::string ready = RunRuleplane(common + " --rules etcd-druid-status@2", exit_code);
  ASSERT_EQ(exit_code, 0) << ready;
  const std::vector<std::string> ready_states = StepStates(ready);
  EXPECT_NE(std::find(ready_states.begin(), ready_states.end(), "SetEtcdReady etcd-main: succeeded"),
            ready_states.end())
      << ready;
  auto live = client_->Get(etcd, log);
  ASSERT_TRUE(live.ok());
  ASSERT_NE(ValueAt(*live, {"status", "ready"}), nullptr);
  EXPECT_FALSE(ValueAt(*live, {"status", "ready"})->bool_value());
  auto has_backup_ready = [&] {
    auto now = client_->Get(etcd, log);
    for (const Value& condition : now.ok() ? FieldList(*now, {"status", "conditions"}) : Value::List{})
      if (TextAt(condition, {"type"}) == "BackupReady") return true;
    return false;
  };
  ASSERT_TRUE(has_backup_ready());

  PatchEtcd("", R"({"spec":{"backup":{"store":null}}})");
  const std::string removed = RunRuleplane(common + " --rules etcd-druid-status@2", exit_code);
  ASSERT_EQ(exit_code, 0) << removed;
  const std::vector<std::string> removed_states = StepStates(removed);
  EXPECT_NE(
      std::find(removed_states.begin(), removed_states.end(), "RemoveEtcdCondition etcd-main: succeeded"),
      removed_states.end())
      << removed;
  EXPECT_FALSE(has_backup_ready());
}

// Deletion: an Etcd created from nothing carries etcd-druid's finalizer;
// deleted, it stays until the teardown removed, in order, its StatefulSet,
// (its Pods: none here, the API server runs alone) the rest of what was
// created for it, and last the finalizer. An object it does not own is kept.
TEST_F(ObserveCluster, ADeletedEtcdIsTornDownInOrderBeforeItGoes) {
  ASSERT_NO_FATAL_FAILURE(ApplyExampleEtcd());
  const std::string common = "apply --cluster default/etcd-main --kubeconfig " + BindOperatorToShippedRole() +
                             " --journal " + dir_->path() + "/journal.db -o json";
  int exit_code = -1;
  const std::string created = RunRuleplane(common, exit_code);
  ASSERT_EQ(exit_code, 0) << created;
  const KubeResource etcd{"druid.gardener.cloud/v1alpha1", "etcds", "default", "etcd-main", ""};
  auto live = client_->Get(etcd, log_);
  ASSERT_TRUE(live.ok());
  EXPECT_EQ(FormatJson(*ValueAt(*live, {"metadata", "finalizers"})), R"(["druid.gardener.cloud/etcd"])");
  auto config_map = client_->Get({"v1", "configmaps", "default", EtcdConfigMapName(*live), ""}, log_);
  ASSERT_TRUE(config_map.ok());
  // The members' ServiceAccount, Role and RoleBinding, created by an operator bound to the shipped Role only.
  ASSERT_TRUE(client_->Get({"v1", "serviceaccounts", "default", "etcd-main", ""}, log_).ok()) << created;
  auto binding = client_->Get(
      {"rbac.authorization.k8s.io/v1", "rolebindings", "default", "druid.gardener.cloud:etcd:etcd-main", ""},
      log_);
  ASSERT_TRUE(binding.ok()) << created;
  EXPECT_EQ(FieldText(*binding, {"roleRef", "name"}), "druid.gardener.cloud:etcd:etcd-main");
  EXPECT_EQ(FieldText(ValueAt(*binding, {"subjects"})->list_value()[0], {"name"}), "etcd-main");
  auto foreign = client_->Create(
      {"coordination.k8s.io/v1", "leases", "default", "", ""},
      *ParseJson(
          R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"etcd-main-other"}})"),
      log_);
  ASSERT_TRUE(foreign.ok()) << foreign.error().message;

  ASSERT_TRUE(client_->Delete(etcd, {}, std::nullopt, log_).ok());
  live = client_->Get(etcd, log_);
  ASSERT_TRUE(live.ok()) << "the finalizer keeps it";
  ASSERT_NE(ValueAt(*live, {"metadata", "deletionTimestamp"}), nullptr);

  // The other rule sets' steps after the teardown find the Etcd gone: skipped
  // (nothing left to write to), and the run succeeds; nothing they plan is
  // created meanwhile (fenced).
  const std::string torn_down = RunRuleplane(common, exit_code);
  EXPECT_EQ(exit_code, 0) << torn_down;
  const std::vector<std::string> states = StepStates(torn_down);
  const auto finalizer_removed =
      std::find(states.begin(), states.end(), "RemoveEtcdFinalizer etcd-main: succeeded");
  ASSERT_NE(finalizer_removed, states.end()) << torn_down;
  EXPECT_NE(finalizer_removed + 1, states.end()) << "no step of another rule set after the teardown";
  for (auto after = finalizer_removed + 1; after != states.end(); ++after)
    EXPECT_TRUE(after->ends_with(": skipped")) << *after << "\n" << torn_down;
  std::vector<std::string> teardown;
  for (const std::string& state : states) {
    for (const char* action : {"DeleteStatefulSet", "WaitForPodsDeleted", "DeleteEtcdComponents",
                               "RemoveEtcdFinalizer", "Create", "Apply", "SetPdb"}) {
      if (state.starts_with(action)) teardown.push_back(state);
    }
  }
  EXPECT_EQ(teardown,
            (std::vector<std::string>{
                "DeleteStatefulSet etcd-main: succeeded", "WaitForPodsDeleted etcd-main: skipped",
                "DeleteEtcdComponents etcd-main: succeeded", "RemoveEtcdFinalizer etcd-main: succeeded"}))
      << torn_down;
  auto gone = client_->Get(etcd, log_);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, ErrorCode::kNotFound);
  for (const KubeResource& component : std::vector<KubeResource>{
           {"apps/v1", "statefulsets", "default", "etcd-main", ""},
           {"v1", "services", "default", "etcd-main-client", ""},
           {"v1", "services", "default", "etcd-main-peer", ""},
           {"v1", "configmaps", "default", FieldText(*config_map, {"metadata", "name"}), ""},
           {"coordination.k8s.io/v1", "leases", "default", "etcd-main-0", ""},
           {"coordination.k8s.io/v1", "leases", "default", "etcd-main-full-snap", ""},
           {"v1", "serviceaccounts", "default", "etcd-main", ""},
           {"rbac.authorization.k8s.io/v1", "roles", "default", "druid.gardener.cloud:etcd:etcd-main", ""},
           {"rbac.authorization.k8s.io/v1", "rolebindings", "default", "druid.gardener.cloud:etcd:etcd-main",
            ""}}) {
    auto object = client_->Get(component, log_);
    EXPECT_TRUE(!object.ok() && object.error().code == ErrorCode::kNotFound) << component.Path();
  }
  EXPECT_TRUE(client_->Get({"coordination.k8s.io/v1", "leases", "default", "etcd-main-other", ""}, log_).ok())
      << "a Lease the Etcd does not own was deleted";
}

TEST_F(ObserveCluster, ACompactionJobIsCreatedOnceRecordedWhenItFinishesAndDeleted) {
  CreateExample(Example("v2-compaction-due.json"));
  ASSERT_FALSE(HasFailure());
  const std::string common = "apply --cluster default/etcd-main --rules etcd-druid@2 --kubeconfig " +
                             BindOperatorToShippedRole() + " --journal " + dir_->path() +
                             "/journal.db -o json";
  int exit_code = -1;
  const std::string applied = RunRuleplane(common, exit_code);
  ASSERT_EQ(exit_code, 0) << applied;
  const std::string created = "CreateCompactionJob etcd-main-compactor: succeeded";
  const std::vector<std::string> states = StepStates(applied);
  EXPECT_NE(std::find(states.begin(), states.end(), created), states.end()) << applied;
  auto job = client_->Get({"batch/v1", "jobs", "default", "etcd-main-compactor", ""}, log_);
  ASSERT_TRUE(job.ok()) << job.error().message;
  const Value& container = ValueAt(*job, {"spec", "template", "spec", "containers"})->list_value()[0];
  EXPECT_EQ(ValueAt(container, {"image"})->string_value(), kMemberImage);
  EXPECT_EQ(ValueAt(container, {"args"})->list_value()[0].string_value(), "compact");

  // The Job is observed (compactionJob): while it runs, no second one is planned.
  RequestLog reads;
  auto now = TimestampFromUnixSeconds(std::time(nullptr));
  ASSERT_TRUE(now.ok());
  auto observed = ::ruleplane::ObserveCluster(*client_, "default", "etcd-main", *now, reads);
  ASSERT_TRUE(observed.ok()) << observed.error().message;
  EXPECT_EQ(TextAt(observed->document, {"compactionJob", "metadata", "name"}), "etcd-main-compactor");
  auto shape = ParseObservedShape(kClusterSnapshotShape);
  ASSERT_TRUE(shape.ok());
  EXPECT_EQ(ShapeMismatches(observed->document, *shape), std::vector<std::string>{});
  const std::string again = RunRuleplane(common, exit_code);
  ASSERT_EQ(exit_code, 0) << again;
  for (const std::string& state : StepStates(again))
    EXPECT_EQ(state.rfind("CreateCompactionJob", 0), std::string::npos) << again;
  ExpectNoStepRepeated(applied, again);

  // The Job fails past its deadline, as the job controller reports it: the
  // outcome is recorded on the Etcd and the Job deleted, the observed one only.
  auto ended = ParseJson(R"({"status":{"failed":1,"conditions":[{"type":"Failed","status":"True",
    "reason":"DeadlineExceeded","lastProbeTime":"2024-05-01T09:00:00Z","lastTransitionTime":"2024-05-01T09:00:00Z"}]}})");
  ASSERT_TRUE(ended.ok());
  auto failed =
      client_->MergePatch({"batch/v1", "jobs", "default", "etcd-main-compactor", "status"}, *ended, log_);
  ASSERT_TRUE(failed.ok()) << failed.error().message;
  const std::string recorded = RunRuleplane(common, exit_code);
  ASSERT_EQ(exit_code, 0) << recorded;
  const std::vector<std::string> recorded_states = StepStates(recorded);
  for (const std::string expected :
       {"SetEtcdCondition etcd-main: succeeded", "DeleteCompactionJob etcd-main-compactor: succeeded"}) {
    EXPECT_NE(std::find(recorded_states.begin(), recorded_states.end(), expected), recorded_states.end())
        << expected << "\n"
        << recorded;
  }
  auto etcd = client_->Get({"druid.gardener.cloud/v1alpha1", "etcds", "default", "etcd-main", ""}, log_);
  ASSERT_TRUE(etcd.ok());
  bool condition_found = false;
  for (const Value& condition : FieldList(*etcd, {"status", "conditions"})) {
    if (FieldText(condition, {"type"}) != "LastSnapshotCompactionSucceeded") continue;
    condition_found = true;
    EXPECT_EQ(FieldText(condition, {"status"}), "False");
    EXPECT_EQ(FieldText(condition, {"reason"}), "DeadlineExceeded");
  }
  EXPECT_TRUE(condition_found) << FormatJson(*etcd);
  // Deleted in the foreground: without a garbage collector here, it stays, marked.
  auto deleted = client_->Get({"batch/v1", "jobs", "default", "etcd-main-compactor", ""}, log_);
  EXPECT_TRUE(!deleted.ok() || ValueAt(*deleted, {"metadata", "deletionTimestamp"}) != nullptr)
      << "the finished Job is still there";

  // While it is on its way out, nothing; the recorded DeadlineExceeded would
  // otherwise ask for a full snapshot at once.
  const std::string waiting = RunRuleplane(common, exit_code);
  ASSERT_EQ(exit_code, 0) << waiting;
  for (const std::string& state : StepStates(waiting)) {
    EXPECT_EQ(state.rfind("TriggerFullSnapshot", 0), std::string::npos) << waiting;
    EXPECT_EQ(state.rfind("CreateCompactionJob", 0), std::string::npos) << waiting;
    EXPECT_EQ(state.rfind("DeleteCompactionJob", 0), std::string::npos) << waiting;
  }
}

}  // namespace
}  // namespace ruleplane::testing
