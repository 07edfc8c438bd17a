#include "engine/plan/plan.h"

#include <gtest/gtest.h>

#include "engine/common/json_value.h"
#include "engine/common/sha256.h"
#include "engine/common/snapshot.h"
#include "engine/rule_file/rule_loader.h"

namespace ruleplane {
namespace {

constexpr const char* kCatalogue = R"(apiVersion: ruleplane.dev/v1
kind: ActionCatalogue
actions:
  - name: DeletePod
    adapter: kubernetes
    disruptive: true
    description: Delete a pod.
    idempotency: done when the pod is gone
    params:
      - {name: name, type: string, required: true}
  - name: SetClusterSize
    adapter: kubernetes
    disruptive: false
    description: Set status.clusterSize.
    idempotency: done when status.clusterSize equals size
    params:
      - {name: size, type: int, required: true}
)";

constexpr const char* kRules = R"(apiVersion: ruleplane.dev/v1
kind: DecisionTable
metadata:
  name: pods
  version: 1.2.3
spec:
  subject: EtcdCluster
  hitPolicy: RULE_ORDER
  params:
    - name: grace
      type: duration
      default: 5m
  facts:
    - name: n
      expr: snapshot.etcd.spec.replicas
    - name: stale
      expr: snapshot.pods.filter(p, now - timestamp(p.since) > grace).map(p, p.name)
  rules:
    - id: delete-stale
      when:
        stale: size(stale) > 0
      then:
        - action: DeletePod
          forEach: stale
          as: pod
          target: pod
          params:
            name: pod
    - id: size
      then:
        - action: SetClusterSize
          target: snapshot.etcd.metadata.name
          params:
            size: n
)";

Snapshot MakeSnapshot(const std::string& observed_at) {
  auto snapshot = ParseSnapshot(R"({"apiVersion": "ruleplane.dev/v1", "kind": "EtcdClusterSnapshot",
    "observedAt": ")" + observed_at +
                                R"(",
    "etcd": {"metadata": {"name": "etcd-main"}, "spec": {"replicas": 3}},
    "pods": [{"name": "etcd-main-0", "since": "2024-05-01T09:00:00Z"},
             {"name": "etcd-main-1", "since": "2024-05-01T09:58:00Z"},
             {"name": "etcd-main-2", "since": "2024-05-01T09:30:00Z"}]})");
  EXPECT_TRUE(snapshot.ok()) << snapshot.error().message;
  return *snapshot;
}

class PlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto catalogue = LoadActionCatalogue(kCatalogue, "catalogue.yaml");
    ASSERT_TRUE(catalogue.catalogue);
    catalogue_ = catalogue.catalogue;
    auto loaded = LoadRuleFile(kRules, "pods.yaml", catalogue_.get());
    ASSERT_TRUE(loaded.rule_set) << (loaded.diagnostics.empty() ? "" : loaded.diagnostics[0].message);
    auto compiled = CompiledRuleSet::Compile(loaded.rule_set);
    ASSERT_TRUE(compiled.ok()) << compiled.error().message;
    compiled_ = *compiled;
  }

  Plan MakeOk(const Snapshot& snapshot, ParamOverrides overrides = {}) {
    EvaluationOptions options;
    options.param_overrides = std::move(overrides);
    auto plan = MakePlan({compiled_}, snapshot, options, catalogue_.get());
    EXPECT_TRUE(plan.ok()) << plan.error().message;
    return plan.ok() ? *plan : Plan{};
  }

  std::shared_ptr<const ActionCatalogue> catalogue_;
  std::shared_ptr<const CompiledRuleSet> compiled_;
};

TEST_F(PlanTest, ExpandsForEachInRuleOrderWithCatalogueFacts) {
  Plan plan = MakeOk(MakeSnapshot("2024-05-01T10:00:00Z"));
  ASSERT_EQ(plan.steps.size(), 3u);
  EXPECT_EQ(plan.steps[0].target, "etcd-main-0");
  EXPECT_EQ(plan.steps[1].target, "etcd-main-2");
  EXPECT_EQ(plan.steps[0].id, "pods/delete-stale/1");
  EXPECT_EQ(plan.steps[1].id, "pods/delete-stale/2");
  EXPECT_EQ(plan.steps[0].params, Value::MakeMap({{Value::String("name"), Value::String("etcd-main-0")}}));
  EXPECT_TRUE(plan.steps[0].disruptive);
  EXPECT_EQ(plan.steps[0].adapter, "kubernetes");
  EXPECT_EQ(plan.steps[2].action, "SetClusterSize");
  EXPECT_FALSE(plan.steps[2].disruptive);
  EXPECT_EQ(plan.steps[2].params, Value::MakeMap({{Value::String("size"), Value::Int(3)}}));
  EXPECT_TRUE(plan.steps[0].depends_on.empty());
  EXPECT_EQ(plan.steps[1].depends_on, std::vector<std::string>{"pods/delete-stale/1"});
  EXPECT_EQ(plan.steps[2].depends_on, std::vector<std::string>{"pods/delete-stale/2"});
  ASSERT_EQ(plan.rule_sets.size(), 1u);
  EXPECT_EQ(plan.rule_sets[0].version, "1.2.3");
  EXPECT_EQ(plan.rule_sets[0].matched_rules, (std::vector<std::string>{"delete-stale", "size"}));
  EXPECT_TRUE(plan.rule_sets[0].digest.starts_with("sha256:"));
}

TEST_F(PlanTest, TimeIsTheSnapshotsObservedAt) {
  // At 09:40 etcd-main-0 (40m) and etcd-main-2 (10m) are past the 5m grace.
  EXPECT_EQ(MakeOk(MakeSnapshot("2024-05-01T09:40:00Z")).steps.size(), 3u);
  // At 09:31 only etcd-main-0 qualifies.
  EXPECT_EQ(MakeOk(MakeSnapshot("2024-05-01T09:31:00Z")).steps.size(), 2u);
}

TEST_F(PlanTest, ParamOverridesChangeTheDecision) {
  Plan plan = MakeOk(MakeSnapshot("2024-05-01T10:00:00Z"), {{"grace", Value::String("45m")}});
  ASSERT_EQ(plan.steps.size(), 2u);
  EXPECT_EQ(plan.steps[0].target, "etcd-main-0");
}

TEST_F(PlanTest, IdempotencyKeysAreStableAcrossSnapshotsAndDistinctAcrossSteps) {
  Plan first = MakeOk(MakeSnapshot("2024-05-01T10:00:00Z"));
  Plan later = MakeOk(MakeSnapshot("2024-05-01T10:02:00Z"));
  ASSERT_EQ(first.steps.size(), later.steps.size());
  EXPECT_NE(first.snapshot_digest, later.snapshot_digest);
  for (size_t i = 0; i < first.steps.size(); ++i) {
    EXPECT_EQ(first.steps[i].idempotency_key, later.steps[i].idempotency_key);
  }
  EXPECT_NE(first.steps[0].idempotency_key, first.steps[1].idempotency_key);
}

TEST_F(PlanTest, PlanDocumentCarriesRuleSetAndSnapshotIdentity) {
  Snapshot snapshot = MakeSnapshot("2024-05-01T10:00:00Z");
  Value document = PlanToValue(MakeOk(snapshot));
  EXPECT_EQ(document.Find("kind")->string_value(), "Plan");
  EXPECT_EQ(document.Find("snapshot")->Find("observedAt")->string_value(), "2024-05-01T10:00:00Z");
  EXPECT_EQ(document.Find("snapshot")->Find("digest")->string_value(), snapshot.digest);
  const Value& rule_set = document.Find("ruleSets")->list_value().at(0);
  EXPECT_EQ(rule_set.Find("name")->string_value(), "pods");
  EXPECT_EQ(document.Find("steps")->list_value().size(), 3u);
}

TEST_F(PlanTest, WrongParamTypeAtPlanTimeNamesRuleAndParam) {
  constexpr const char* kBad = R"(apiVersion: ruleplane.dev/v1
kind: DecisionTable
metadata: {name: bad, version: 1.0.0}
spec:
  subject: EtcdCluster
  hitPolicy: FIRST
  facts:
    - name: name
      expr: snapshot.etcd.metadata.name
  rules:
    - id: size-from-name
      then:
        - action: SetClusterSize
          params:
            size: name
)";
  auto loaded = LoadRuleFile(kBad, "bad.yaml", catalogue_.get());
  ASSERT_TRUE(loaded.rule_set);
  auto compiled = CompiledRuleSet::Compile(loaded.rule_set);
  ASSERT_TRUE(compiled.ok());
  auto plan = MakePlan({*compiled}, MakeSnapshot("2024-05-01T10:00:00Z"), {}, catalogue_.get());
  ASSERT_TRUE(plan.ok());
  ASSERT_TRUE(plan->rule_sets[0].error);
  const std::string& message = plan->rule_sets[0].error->message;
  EXPECT_NE(message.find("rule 'size-from-name'"), std::string::npos) << message;
  EXPECT_NE(message.find("param 'size'"), std::string::npos) << message;
  EXPECT_NE(message.find("expected int"), std::string::npos) << message;
  EXPECT_TRUE(plan->steps.empty());
  EXPECT_TRUE(plan->rule_sets[0].matched_rules.empty());
}

TEST(Snapshot, MalformedSnapshotsNameTheField) {
  auto bad_json = ParseSnapshot(R"({"apiVersion": "ruleplane.dev/v1", "kind": )");
  ASSERT_FALSE(bad_json.ok());
  EXPECT_NE(bad_json.error().message.find("byte"), std::string::npos) << bad_json.error().message;

  auto no_time = ParseSnapshot(R"({"apiVersion": "ruleplane.dev/v1", "kind": "EtcdClusterSnapshot"})");
  ASSERT_FALSE(no_time.ok());
  EXPECT_NE(no_time.error().message.find("observedAt"), std::string::npos);

  auto bad_time = ParseSnapshot(
      R"({"apiVersion": "ruleplane.dev/v1", "kind": "EtcdClusterSnapshot", "observedAt": "yesterday"})");
  ASSERT_FALSE(bad_time.ok());
  EXPECT_NE(bad_time.error().message.find("observedAt"), std::string::npos);

  auto bad_version = ParseSnapshot(
      R"({"apiVersion": "v9", "kind": "EtcdClusterSnapshot", "observedAt": "2024-05-01T10:00:00Z"})");
  ASSERT_FALSE(bad_version.ok());
  EXPECT_NE(bad_version.error().message.find("apiVersion"), std::string::npos);
}

TEST(Snapshot, DigestIsOfTheTextAsObserved) {
  const std::string text =
      R"({"apiVersion": "ruleplane.dev/v1", "kind": "EtcdClusterSnapshot", "observedAt": "2024-05-01T10:00:00Z"})";
  auto a = ParseSnapshot(text);
  auto b = ParseSnapshot(
      R"({"observedAt": "2024-05-01T10:00:00Z", "kind": "EtcdClusterSnapshot", "apiVersion": "ruleplane.dev/v1"})");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->digest, "sha256:" + Sha256Hex(text));
  EXPECT_NE(a->digest, b->digest);
  EXPECT_EQ(a->subject(), "EtcdCluster");

  auto from_value = SnapshotFromValue(a->document);
  ASSERT_TRUE(from_value.ok());
  EXPECT_EQ(from_value->digest, "sha256:" + Sha256Hex(FormatJson(a->document)));
}

}  // namespace
}  // namespace ruleplane
