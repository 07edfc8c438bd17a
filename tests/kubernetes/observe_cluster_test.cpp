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
#include <sstream>

#include "adapters/kubernetes/cluster_observer.h"
#include "adapters/kubernetes/manifests.h"
#include "engine/common/json_value.h"
#include "tests/run_ruleplane.h"
#include "tests/support/kube_cluster.h"
#include "tests/support/temp_dir.h"

namespace ruleplane::testing {
namespace {

Value Load(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  auto value = ParseJson(text.str());
  EXPECT_TRUE(value.ok()) << path;
  return value.ok() ? *value : Value::Null();
}

// "2024-05-01T09:59:50.876544Z" moved by whole seconds, its fraction kept as
// written (Lease times must keep their six digits); other strings as they are.
Value ShiftTimes(const Value& value, int64_t seconds) {
  if (value.is_map()) {
    Value::Map map;
    for (const auto& [key, item] : value.map_value()) map.emplace_back(key, ShiftTimes(item, seconds));
    return Value::MakeMap(std::move(map));
  }
  if (value.is_list()) {
    Value::List list;
    for (const Value& item : value.list_value()) list.push_back(ShiftTimes(item, seconds));
    return Value::MakeList(std::move(list));
  }
  if (!value.is_string()) return value;
  const std::string& text = value.string_value();
  std::tm parts{};
  if (text.size() < 20 || text[4] != '-' || text[10] != 'T' || text.back() != 'Z' ||
      strptime(text.substr(0, 19).c_str(), "%Y-%m-%dT%H:%M:%S", &parts) == nullptr) {
    return value;
  }
  const std::time_t shifted = timegm(&parts) + seconds;
  std::tm out{};
  gmtime_r(&shifted, &out);
  char whole[32];
  std::strftime(whole, sizeof whole, "%Y-%m-%dT%H:%M:%S", &out);
  return Value::String(whole + text.substr(19));
}

const Value* At(const Value& object, std::initializer_list<std::string_view> keys) {
  const Value* at = &object;
  for (std::string_view key : keys) {
    if (!at->is_map() || (at = at->Find(key)) == nullptr) return nullptr;
  }
  return at;
}

// The object as a client creates it: no server-set metadata, owned by `owner`
// (apiVersion, kind, name, uid) when given, without its status.
Value ForCreate(const Value& object, const Value& owner) {
  Value::Map result;
  for (const auto& [key, item] : object.map_value()) {
    if (key.string_value() == "status") continue;
    if (key.string_value() != "metadata") {
      result.emplace_back(key, item);
      continue;
    }
    Value::Map metadata;
    for (const auto& [field, part] : item.map_value()) {
      const std::string& name = field.string_value();
      if (name == "uid" || name == "resourceVersion" || name == "creationTimestamp" || name == "generation" ||
          name == "ownerReferences" || name == "managedFields" || name == "namespace") {
        continue;
      }
      metadata.emplace_back(field, part);
    }
    if (!owner.is_null()) metadata.emplace_back(Value::String("ownerReferences"), Value::MakeList({owner}));
    result.emplace_back(key, Value::MakeMap(std::move(metadata)));
  }
  return Value::MakeMap(std::move(result));
}

Value OwnerOf(const Value& object) {
  return Value::MakeMap({{Value::String("apiVersion"), *At(object, {"apiVersion"})},
                         {Value::String("kind"), *At(object, {"kind"})},
                         {Value::String("name"), *At(object, {"metadata", "name"})},
                         {Value::String("uid"), *At(object, {"metadata", "uid"})},
                         {Value::String("controller"), Value::Bool(true)}});
}

// Pods without a service-account token (no controller manager mints one here).
Value WithoutToken(Value pod) {
  Value::Map result;
  for (const auto& [key, item] : pod.map_value()) {
    if (key.string_value() != "spec") {
      result.emplace_back(key, item);
      continue;
    }
    Value::Map spec;
    for (const auto& [field, part] : item.map_value()) {
      if (field.string_value() != "serviceAccountName") spec.emplace_back(field, part);
    }
    spec.emplace_back(Value::String("automountServiceAccountToken"), Value::Bool(false));
    result.emplace_back(key, Value::MakeMap(std::move(spec)));
  }
  return Value::MakeMap(std::move(result));
}

class ObserveCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<TempDir>("observe-cluster");
    auto kube = KubeCluster::Start(dir_->path(), {"operator"});
    ASSERT_TRUE(kube.ok()) << kube.error().message;
    kube_ = std::move(*kube);
    client_ = std::make_unique<KubeClient>(kube_->AdminConfig());
    auto crd = LoadManifests(std::string(RULEPLANE_SOURCE_DIR) + "/deploy/etcd-crd.yaml");
    ASSERT_TRUE(crd.ok()) << crd.error().message;
    // The namespace's default ServiceAccount, which pod admission looks up
    // (the controller manager that would create it does not run here).
    crd->push_back(Value::MakeMap(
        {{Value::String("apiVersion"), Value::String("v1")},
         {Value::String("kind"), Value::String("ServiceAccount")},
         {Value::String("metadata"), Value::MakeMap({{Value::String("name"), Value::String("default")}})}}));
    ASSERT_TRUE(ApplyManifests(*client_, *crd, "default", log_).ok());
  }

  // Creates `object` and then writes its status through /status; returns what the server stored.
  Value CreateWithStatus(const KubeResource& collection, const Value& object, const Value& owner) {
    Result<Value> created = Error{ErrorCode::kNotFound, "not tried", {}};
    for (int attempt = 0; attempt < 50; ++attempt) {  // a new CRD takes a moment to serve
      created = client_->Create(collection, ForCreate(object, owner), log_);
      if (created.ok() || created.error().code != ErrorCode::kNotFound) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    EXPECT_TRUE(created.ok()) << created.error().message;
    if (!created.ok()) return Value::Null();
    if (const Value* status = At(object, {"status"})) {
      KubeResource resource = collection;
      resource.name = At(object, {"metadata", "name"})->string_value();
      resource.subresource = "status";
      auto patched =
          client_->MergePatch(resource, Value::MakeMap({{Value::String("status"), *status}}), log_);
      EXPECT_TRUE(patched.ok()) << resource.name << ": " << patched.error().message;
      if (patched.ok()) return *patched;
    }
    return *created;
  }

  std::string Example(const std::string& name) const {
    return std::string(RULEPLANE_SOURCE_DIR) + "/examples/snapshots/" + name;
  }

  // The example's objects created for real (every time shifted so that its
  // observedAt is now); returns the StatefulSet as stored.
  Value CreateExample(const std::string& example) {
    const Value original = Load(example);
    auto observed_at = ParseRfc3339(At(original, {"observedAt"})->string_value());
    EXPECT_TRUE(observed_at.ok());
    const Value snapshot = ShiftTimes(original, std::time(nullptr) - observed_at->seconds);
    const Value etcd = CreateWithStatus({"druid.gardener.cloud/v1alpha1", "etcds", "default", "", ""},
                                        *At(snapshot, {"etcd"}), Value::Null());
    if (etcd.is_null()) return etcd;
    const Value statefulset = CreateWithStatus({"apps/v1", "statefulsets", "default", "", ""},
                                               *At(snapshot, {"statefulSet"}), OwnerOf(etcd));
    if (statefulset.is_null()) return statefulset;
    for (const Value& lease : At(snapshot, {"leases"})->list_value()) {
      CreateWithStatus({"coordination.k8s.io/v1", "leases", "default", "", ""}, lease, OwnerOf(etcd));
    }
    for (const Value& pod : At(snapshot, {"pods"})->list_value()) {
      CreateWithStatus({"v1", "pods", "default", "", ""}, WithoutToken(pod), OwnerOf(statefulset));
    }
    // Kubernetes 1.20 serves PodDisruptionBudgets as policy/v1beta1 only.
    if (const Value* budget = At(snapshot, {"podDisruptionBudget"})) {
      Value::Map fields;
      for (const auto& [key, item] : budget->map_value()) {
        fields.emplace_back(key, key.string_value() == "apiVersion" ? Value::String("policy/v1beta1") : item);
      }
      CreateWithStatus({"policy/v1beta1", "poddisruptionbudgets", "default", "", ""},
                       Value::MakeMap(std::move(fields)), OwnerOf(etcd));
    }
    return statefulset;
  }

  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<KubeCluster> kube_;
  std::unique_ptr<KubeClient> client_;
  RequestLog log_;
};

// The binary as a user runs it: its exit code, and what it printed (stdout, then stderr).
std::string RunRuleplane(const std::string& args, int& exit_code) {
  const testing_support::CommandResult run = testing_support::Ruleplane(args);
  exit_code = run.exit_code;
  return run.out + run.err;
}

// The states of the steps an `apply -o json` reports.
std::vector<std::string> StepStates(const std::string& output) {
  std::vector<std::string> states;
  auto report = ParseJson(output);
  if (!report.ok()) return {"not JSON: " + output};
  for (const Value& step : At(*report, {"execution", "steps"})->list_value()) {
    states.push_back(At(step, {"action"})->string_value() + " " + At(step, {"target"})->string_value() +
                     ": " + At(step, {"state"})->string_value());
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
  EXPECT_EQ(At(live->document, {"leases"})->list_value().size(), 5u);
  EXPECT_EQ(At(live->document, {"pods"})->list_value().size(), 3u);
  EXPECT_EQ(At(live->document, {"statefulSet", "metadata", "uid"})->string_value(),
            At(statefulset, {"metadata", "uid"})->string_value());
  EXPECT_NE(At(live->document, {"podDisruptionBudget"}), nullptr);
  for (const Request& request : reads.requests()) EXPECT_FALSE(request.mutates) << DescribeRequest(request);

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
    for (const Value& rule_set : At(plan, {"ruleSets"})->list_value()) {
      lines.push_back(At(rule_set, {"name"})->string_value() + ": " +
                      FormatJson(*At(rule_set, {"matchedRules"})));
    }
    for (const Value& step : At(plan, {"steps"})->list_value()) {
      lines.push_back(At(step, {"action"})->string_value() + " " + At(step, {"target"})->string_value());
    }
    return lines;
  };
  EXPECT_EQ(decisions(*cluster_plan), decisions(*file_plan));
  EXPECT_NE(from_cluster.find("\"DeletePod\""), std::string::npos) << from_cluster;

  const std::string printed =
      RunRuleplane("observe cluster --kubeconfig " + kubeconfig + " -n default etcd-main", exit_code);
  ASSERT_EQ(exit_code, 0) << printed;
  EXPECT_NE(printed.find("\"kind\": \"EtcdClusterSnapshot\""), std::string::npos);
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
  EXPECT_EQ(At(*still, {"metadata", "deletionTimestamp"}), nullptr) << server_dry;

  const std::string applied = RunRuleplane(common + " --allow-disruptive -o json", exit_code);
  ASSERT_EQ(exit_code, 0) << applied;
  EXPECT_EQ(StepStates(applied), std::vector<std::string>{"DeletePod etcd-main-2: succeeded"});
  auto deleted = client_->Get(pod, log);
  EXPECT_TRUE(!deleted.ok() || At(*deleted, {"metadata", "deletionTimestamp"}) != nullptr)
      << "deleted (terminating: no kubelet here finishes it)";
  for (const char* other : {"etcd-main-0", "etcd-main-1"}) {
    auto kept = client_->Get({"v1", "pods", "default", other, ""}, log);
    ASSERT_TRUE(kept.ok()) << other;
    EXPECT_EQ(At(*kept, {"metadata", "deletionTimestamp"}), nullptr) << other;
  }

  const std::string again = RunRuleplane(common + " --allow-disruptive -o json", exit_code);
  ASSERT_EQ(exit_code, 0) << again;
  for (const std::string& state : StepStates(again))
    EXPECT_EQ(state.find("succeeded"), std::string::npos) << state;
}

TEST_F(ObserveCluster, ApplyScalesUpWithLeasesAndBudgetAndASecondApplyRepeatsNothing) {
  CreateExample(Example("scale-up.json"));
  ASSERT_FALSE(HasFailure());
  // As the shipped Role allows, and no more: the user "operator" is bound to it.
  auto rbac = LoadManifests(std::string(RULEPLANE_SOURCE_DIR) + "/deploy/rbac.yaml");
  ASSERT_TRUE(rbac.ok()) << rbac.error().message;
  rbac->push_back(*ParseJson(R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding",)"
                             R"("metadata":{"name":"ruleplane-operator"},"roleRef":{"apiGroup":)"
                             R"("rbac.authorization.k8s.io","kind":"Role","name":"ruleplane"},)"
                             R"("subjects":[{"kind":"User","name":"operator"}]})"));
  ASSERT_TRUE(ApplyManifests(*client_, *rbac, "default", log_).ok());
  KubeClient operator_client(kube_->ConfigFor("operator"));
  for (int attempt = 0; attempt < 50; ++attempt) {  // until the authorizer sees the binding
    if (operator_client.Get({"druid.gardener.cloud/v1alpha1", "etcds", "default", "etcd-main", ""}, log_)
            .ok())
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  const std::string common = "apply --cluster default/etcd-main --kubeconfig " +
                             kube_->WriteKubeconfig("operator") + " --journal " + dir_->path() +
                             "/journal.db --allow-disruptive -o json";
  int exit_code = -1;
  const std::string applied = RunRuleplane(common, exit_code);
  ASSERT_EQ(exit_code, 0) << applied;
  const std::vector<std::string> states = StepStates(applied);
  EXPECT_NE(std::find(states.begin(), states.end(), "ScaleStatefulSet etcd-main: succeeded"), states.end())
      << applied;

  RequestLog log;
  auto statefulset = client_->Get({"apps/v1", "statefulsets", "default", "etcd-main", ""}, log);
  ASSERT_TRUE(statefulset.ok());
  EXPECT_EQ(At(*statefulset, {"spec", "replicas"})->int_value(), 5);
  for (const char* lease : {"etcd-main-3", "etcd-main-4"}) {
    EXPECT_TRUE(client_->Get({"coordination.k8s.io/v1", "leases", "default", lease, ""}, log).ok()) << lease;
  }
  auto budget = client_->Get({"policy/v1beta1", "poddisruptionbudgets", "default", "etcd-main", ""}, log);
  ASSERT_TRUE(budget.ok());
  EXPECT_EQ(At(*budget, {"spec", "minAvailable"})->int_value(), 3);

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
  EXPECT_EQ(At(*client_->Get(statefulset, log_), {"spec", "replicas"})->int_value(), 3)
      << "the fenced write changed nothing";

  const std::string rerun = RunRuleplane("apply --cluster default/etcd-main " + common, exit_code);
  ASSERT_EQ(exit_code, 0) << rerun;
  EXPECT_EQ(At(*client_->Get(statefulset, log_), {"spec", "replicas"})->int_value(), 5)
      << "re-observed, re-planned";
}

}  // namespace
}  // namespace ruleplane::testing
