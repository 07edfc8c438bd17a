// The DataVolumesReady condition from what Kubernetes itself reports: an Etcd
// whose storage class does not exist gets claims that kube-controller-manager
// cannot provision, and the persistent volume controller's Warning Events
// about them reach the condition (rules/etcd-druid/v2-data-volumes.yaml,
// observers/data_volume_observer.h).
#include <gtest/gtest.h>

#include "adapters/kubernetes/manifests.h"
#include "adapters/kubernetes/object_fields.h"
#include "engine/common/json_value.h"
#include "engine/verify/conformance.h"
#include "observers/cluster_observer.h"
#include "observers/data_volume_observer.h"
#include "observers/observed_shapes.h"
#include "tests/run_ruleplane.h"
#include "tests/support/kube_test_bed.h"
#include "tests/support/source_paths.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {
namespace {

Value DataVolumesReady(const Value& etcd) {
  for (const Value& condition : FieldList(etcd, {"status", "conditions"})) {
    if (FieldText(condition, {"type"}) == "DataVolumesReady") return condition;
  }
  return Value::Null();
}

TEST(DataVolumes, AClaimThatCannotBeProvisionedMakesDataVolumesReadyFalseWithItsWarning) {
  TempDir dir("data-volumes");
  auto bed = KubeTestBed::Start(dir.path(), {.cluster = {.users = {"operator"}, .controller_manager = true}});
  ASSERT_TRUE(bed.ok()) << bed.error().message;
  KubeClient& admin = (*bed)->admin();
  RequestLog& log = (*bed)->log();
  auto example = LoadManifests(std::string(SourceDir()) + "/examples/etcd.yaml");
  ASSERT_TRUE(example.ok()) << example.error().message;
  ASSERT_TRUE(Eventually([&] { return ApplyManifests(admin, *example, "default", log).ok(); },
                         std::chrono::seconds(10)));
  auto patched = admin.MergePatch({"druid.gardener.cloud/v1alpha1", "etcds", "default", "etcd-main", ""},
                                  *ParseJson(R"({"spec":{"storageClass":"no-such-class"}})"), log);
  ASSERT_TRUE(patched.ok()) << patched.error().message;
  ASSERT_TRUE((*bed)->BindToShippedRole("operator").ok());
  const std::string common =
      "apply --cluster default/etcd-main --rules etcd-druid@2 --rules etcd-druid-components@1 "
      "--kubeconfig " +
      (*bed)->kube().WriteKubeconfig("operator") + " --journal " + dir.path() + "/journal.db -o json";
  const testing_support::CommandResult created = testing_support::Ruleplane(common);
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;

  // The StatefulSet controller makes the claims; the persistent volume
  // controller finds no such class and says so in a Warning Event.
  const std::string claim = "etcd-main-etcd-main-0";
  std::string warning;
  ASSERT_TRUE(Eventually(
      [&] {
        RequestLog reads;
        auto events = admin.List({"v1", "events", "default", "", ""}, "", reads,
                                 "involvedObject.name=" + claim + ",type=Warning");
        if (!events.ok() || FieldList(*events, {"items"}).empty()) return false;
        warning = FieldText(FieldList(*events, {"items"})[0], {"message"});
        return true;
      },
      std::chrono::seconds(60)))
      << "no Warning Event about " << claim;
  EXPECT_NE(warning.find("no-such-class"), std::string::npos) << warning;

  // Observed: the claims of the StatefulSet, and the warnings of those not Bound.
  auto now = TimestampFromUnixSeconds(std::time(nullptr));
  ASSERT_TRUE(now.ok());
  RequestLog reads;
  auto observed = ObserveCluster(admin, "default", "etcd-main", *now, reads);
  ASSERT_TRUE(observed.ok()) << observed.error().message;
  EXPECT_EQ(FieldList(observed->document, {"persistentVolumeClaims"}).size(), 3u);
  auto warned = WithUnboundClaimWarnings(*observed, admin, reads);
  ASSERT_TRUE(warned.ok()) << warned.error().message;
  const Value::List entries = FieldList(warned->document, {"unboundClaimWarnings"});
  ASSERT_EQ(entries.size(), 3u) << FormatJson(warned->document);
  auto shape = ParseObservedShape(kClusterSnapshotShape);
  ASSERT_TRUE(shape.ok()) << shape.error().message;
  EXPECT_EQ(ShapeMismatches(warned->document, *shape), std::vector<std::string>{});
  for (const Request& request : reads.requests()) EXPECT_FALSE(request.mutates) << DescribeRequest(request);

  // Applied under today's rules: the condition says which claim and why.
  const testing_support::CommandResult applied = testing_support::Ruleplane(common);
  ASSERT_EQ(applied.exit_code, 0) << applied.out << applied.err;
  auto etcd = admin.Get({"druid.gardener.cloud/v1alpha1", "etcds", "default", "etcd-main", ""}, log);
  ASSERT_TRUE(etcd.ok());
  const Value condition = DataVolumesReady(*etcd);
  ASSERT_FALSE(condition.is_null()) << FormatJson(*etcd);
  EXPECT_EQ(FieldText(condition, {"status"}), "False");
  EXPECT_EQ(FieldText(condition, {"reason"}), "FoundWarningsForDataVolumes");
  const std::string message = FieldText(condition, {"message"});
  EXPECT_NE(message.find("Warning for PVC default/" + claim + ": ProvisioningFailed: "), std::string::npos)
      << message;
  EXPECT_NE(message.find("no-such-class"), std::string::npos) << message;
}

}  // namespace
}  // namespace ruleplane::testing
