// The Etcd status fields that report its StatefulSet (etcd-druid's
// inspectStatefulSetAndMutateETCDStatus and setSelector).
#include "controller/stateful_set_status.h"

#include <gtest/gtest.h>

#include "engine/common/json_value.h"

namespace ruleplane {
namespace {

Value Json(const std::string& text) {
  auto parsed = ParseJson(text);
  EXPECT_TRUE(parsed.ok()) << parsed.error().message;
  return parsed.ok() ? *parsed : Value();
}

Value StatefulSet(int ready_replicas) {
  return Json(R"({"metadata": {"name": "etcd-main"},
    "spec": {"replicas": 5, "selector": {"matchLabels": {"instance": "etcd-main", "name": "etcd"}}},
    "status": {"replicas": 5, "currentReplicas": 4, "updatedReplicas": 1, "readyReplicas": )" +
              std::to_string(ready_replicas) + "}}");
}

TEST(StatefulSetStatus, ReportsTheStatefulSetsCountsWithCurrentReplicasAsReplicas) {
  const Value etcd = Json(R"({"metadata": {"name": "etcd-main"}, "status": {"clusterSize": 5}})");
  const Value sts = StatefulSet(3);
  const Value fields = StatefulSetStatus(etcd, &sts);
  ASSERT_TRUE(fields.is_map());
  EXPECT_EQ(FormatJson(fields),
            FormatJson(Json(R"({"currentReplicas": 4, "readyReplicas": 3, "updatedReplicas": 1,
              "selector": "instance=etcd-main,name=etcd",
              "labelSelector": {"matchLabels": {"instance": "etcd-main", "name": "etcd"}},
              "replicas": 4, "etcd": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "etcd-main"}})")));
}

TEST(StatefulSetStatus, AStatusThatSaysItAllAlreadyGetsNoPatchAndOneDifferenceGetsOne) {
  const Value sts = StatefulSet(3);
  Value etcd = Json(R"({"metadata": {"name": "etcd-main"}})");
  const Value fields = StatefulSetStatus(etcd, &sts);
  etcd = Json(R"({"metadata": {"name": "etcd-main"}, "status": )" + FormatJson(fields) + "}");
  EXPECT_TRUE(StatefulSetStatus(etcd, &sts).is_null());
  const Value more_ready = StatefulSet(4);
  const Value changed = StatefulSetStatus(etcd, &more_ready);
  ASSERT_TRUE(changed.is_map());
  EXPECT_EQ(changed.Find("readyReplicas")->int_value(), 4);
}

TEST(StatefulSetStatus, WithoutAStatefulSetNothingIsCurrentOrReadyAndReplicasStayAsTheyWere) {
  const Value etcd = Json(R"({"metadata": {"name": "etcd-main"}, "status": {"replicas": 3}})");
  const Value null_sts = Value::Null();
  const Value fields = StatefulSetStatus(etcd, &null_sts);
  ASSERT_TRUE(fields.is_map());
  EXPECT_EQ(fields.Find("currentReplicas")->int_value(), 0);
  EXPECT_EQ(fields.Find("readyReplicas")->int_value(), 0);
  EXPECT_EQ(fields.Find("replicas"), nullptr);
  EXPECT_EQ(fields.Find("etcd"), nullptr);
  // The selector the StatefulSet will be created with.
  EXPECT_NE(fields.Find("selector")->string_value().find("etcd-main"), std::string::npos);
}

}  // namespace
}  // namespace ruleplane
