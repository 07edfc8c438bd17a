// EtcdReconciler against a real kube-apiserver, over a cache that lags
// behind it (stopped after it synced): what the reconcile writes to the
// status after its plan is computed from the Etcd as the API server has it,
// so a disruptive step's time written in between is not rolled back (the
// minimum interval between disruptive steps is read from it).
#include "controller/etcd_reconciler.h"

#include <gtest/gtest.h>

#include <ctime>
#include <sstream>

#include "cli/rule_library.h"
#include "controller/manager.h"
#include "engine/common/json_value.h"
#include "engine/common/time_util.h"
#include "tests/support/kube_objects.h"
#include "tests/support/kube_test_bed.h"
#include "tests/support/source_paths.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {
namespace {

const KubeResource kEtcd{"druid.gardener.cloud/v1alpha1", "etcds", "default", "etcd-main", ""};

std::string TimeAgo(int64_t seconds) {
  return FormatRfc3339(*TimestampFromUnixSeconds(std::time(nullptr) - seconds));
}

std::string LastDisruptiveStep(const Value& etcd) {
  const Value* time = ValueAt(etcd, {"status", "lastOperation", "lastDisruptiveStepTime"});
  const Value* id = ValueAt(etcd, {"status", "lastOperation", "lastDisruptiveStep", "id"});
  return (time != nullptr ? time->string_value() : "-") + " " + (id != nullptr ? id->string_value() : "-");
}

TEST(EtcdReconciler, TheStatusWrittenAfterAPlanOverALaggingCacheKeepsTheNewerDisruptiveStep) {
  TempDir dir("etcd-reconciler");
  auto bed = KubeTestBed::Start(dir.path(), {.example = "minority-not-ready.json"});
  ASSERT_TRUE(bed.ok()) << bed.error().message;
  KubeClient& admin = (*bed)->admin();
  RequestLog log;
  KubeResource status = kEtcd;
  status.subresource = "status";
  auto record = [&](const std::string& time, const std::string& id) {
    auto patched = admin.MergePatch(status,
                                    *ParseJson(R"({"status":{"lastOperation":{"lastDisruptiveStepTime":")" +
                                               time + R"(","lastDisruptiveStep":{"id":")" + id + R"("}}}})"),
                                    log);
    ASSERT_TRUE(patched.ok()) << patched.error().message;
  };
  const std::string older = TimeAgo(600), newer = TimeAgo(5);
  ASSERT_NO_FATAL_FAILURE(record(older, "older"));

  ObjectCache cache((*bed)->kube().AdminConfig(), WatchedKinds("default", "", false),
                    [](const std::string&, const Value&) {});
  cache.Start();
  ASSERT_TRUE(cache.WaitForSync(std::chrono::seconds(30)));
  ASSERT_TRUE(Eventually(
      [&] {
        auto cached = cache.Get("etcds", "default", "etcd-main");
        return cached && LastDisruptiveStep(*cached) == older + " older";
      },
      std::chrono::seconds(30)));
  cache.Stop();  // from here on it lags behind the API server
  // Another run's disruptive step, begun after the cache's last event.
  ASSERT_NO_FATAL_FAILURE(record(newer, "newer"));

  std::ostringstream errors, reconciler_log;
  auto library = cli::LoadRuleLibrary(cli::DefaultRuleReferences(), errors);
  ASSERT_TRUE(library) << errors.str();
  auto rule_sets = cli::SelectForSubject(*library, "EtcdCluster", errors);
  ASSERT_FALSE(rule_sets.empty()) << errors.str();
  ControllerMetrics metrics;
  EtcdReconciler reconciler(cache, admin, rule_sets, library->catalogue.get(), nullptr, ReconcilerOptions{},
                            metrics, reconciler_log);
  // Its plan may be refused (nothing disruptive is allowed here); the status is written either way.
  auto reconciled = reconciler.Reconcile("default/etcd-main");
  const std::string outcome = reconciled.ok() ? "ok" : reconciled.error().message;

  auto live = admin.Get(kEtcd, log);
  ASSERT_TRUE(live.ok()) << live.error().message;
  ASSERT_NE(ValueAt(*live, {"status", "lastOperation", "planDigest"}), nullptr)
      << "the reconcile (" << outcome << ") wrote no status after its plan: " << FormatJson(*live) << "\n"
      << reconciler_log.str();
  EXPECT_EQ(LastDisruptiveStep(*live), newer + " newer")
      << "rolled back to what the lagging cache had (" << older << ")";
}

}  // namespace
}  // namespace ruleplane::testing
