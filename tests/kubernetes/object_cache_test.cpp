// ObjectCache against a real kube-apiserver: ListOwnedBy follows the
// ownerReferences of the objects as they are created, re-owned and deleted,
// and gives what List and a filter by owner would.
#include "adapters/kubernetes/object_cache.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "engine/common/json_value.h"
#include "tests/support/kube_cluster.h"
#include "tests/support/kube_objects.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {
namespace {

std::set<std::string> Names(const std::vector<Value>& objects) {
  std::set<std::string> names;
  for (const Value& object : objects) names.insert(ValueAt(object, {"metadata", "name"})->string_value());
  return names;
}

Value Lease(const std::string& name) {
  return Value::MakeMap(
      {{Value::String("apiVersion"), Value::String("coordination.k8s.io/v1")},
       {Value::String("kind"), Value::String("Lease")},
       {Value::String("metadata"), Value::MakeMap({{Value::String("name"), Value::String(name)}})},
       {Value::String("spec"), Value::MakeMap({{Value::String("holderIdentity"), Value::String("x")}})}});
}

Value OwnerReference(const Value& owner) {
  return Value::MakeMap({{Value::String("apiVersion"), *ValueAt(owner, {"apiVersion"})},
                         {Value::String("kind"), *ValueAt(owner, {"kind"})},
                         {Value::String("name"), *ValueAt(owner, {"metadata", "name"})},
                         {Value::String("uid"), *ValueAt(owner, {"metadata", "uid"})}});
}

TEST(ObjectCache, ListOwnedByFollowsOwnerReferencesAsTheyChange) {
  TempDir dir("object-cache");
  auto kube = KubeCluster::Start(dir.path());
  ASSERT_TRUE(kube.ok()) << kube.error().message;
  KubeClient admin((*kube)->AdminConfig());
  RequestLog log;
  // Two owners: ConfigMaps, so that nothing but this test owns anything.
  std::vector<Value> owners;
  for (const char* name : {"owner-a", "owner-b"}) {
    auto created =
        admin.Create({"v1", "configmaps", "default", "", ""},
                     *ParseJson(std::string(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")") +
                                name + R"("}})"),
                     log);
    ASSERT_TRUE(created.ok()) << created.error().message;
    owners.push_back(*created);
  }
  const std::string uid_a = ValueAt(owners[0], {"metadata", "uid"})->string_value();
  const std::string uid_b = ValueAt(owners[1], {"metadata", "uid"})->string_value();
  const KubeResource leases{"coordination.k8s.io/v1", "leases", "default", "", ""};
  for (const char* name : {"a-0", "a-1"})
    ASSERT_TRUE(CreateWithStatus(admin, leases, Lease(name), OwnerReference(owners[0]), log).ok());
  ASSERT_TRUE(CreateWithStatus(admin, leases, Lease("b-0"), OwnerReference(owners[1]), log).ok());
  ASSERT_TRUE(CreateWithStatus(admin, leases, Lease("orphan"), Value::Null(), log).ok());

  ObjectCache cache((*kube)->AdminConfig(), {{leases, ""}}, [](const std::string&, const Value&) {});
  cache.Start();
  ASSERT_TRUE(cache.WaitForSync(std::chrono::seconds(30)));
  EXPECT_EQ(Names(cache.ListOwnedBy("leases", "default", uid_a)), (std::set<std::string>{"a-0", "a-1"}));
  EXPECT_EQ(Names(cache.ListOwnedBy("leases", "default", uid_b)), (std::set<std::string>{"b-0"}));
  EXPECT_TRUE(cache.ListOwnedBy("leases", "other", uid_a).empty());
  EXPECT_TRUE(cache.ListOwnedBy("leases", "default", "no-such-uid").empty());
  EXPECT_TRUE(cache.ListOwnedBy("pods", "default", uid_a).empty());

  // Re-owned: a-1 moves to owner b; then a-0 is deleted; then a new one is created.
  KubeResource a1 = leases;
  a1.name = "a-1";
  auto reowned = admin.MergePatch(
      a1,
      Value::MakeMap(
          {{Value::String("metadata"), Value::MakeMap({{Value::String("ownerReferences"),
                                                        Value::MakeList({OwnerReference(owners[1])})}})}}),
      log);
  ASSERT_TRUE(reowned.ok()) << reowned.error().message;
  KubeResource a0 = leases;
  a0.name = "a-0";
  ASSERT_TRUE(admin.Delete(a0, {}, std::nullopt, log).ok());
  ASSERT_TRUE(CreateWithStatus(admin, leases, Lease("a-2"), OwnerReference(owners[0]), log).ok());
  EXPECT_TRUE(Eventually(
      [&] {
        return Names(cache.ListOwnedBy("leases", "default", uid_a)) == std::set<std::string>{"a-2"} &&
               Names(cache.ListOwnedBy("leases", "default", uid_b)) == std::set<std::string>{"a-1", "b-0"};
      },
      std::chrono::seconds(30)))
      << "owned by a: " << Names(cache.ListOwnedBy("leases", "default", uid_a)).size()
      << ", by b: " << Names(cache.ListOwnedBy("leases", "default", uid_b)).size();
  cache.Stop();
}

}  // namespace
}  // namespace ruleplane::testing
