// The controller's manager loop as a library (controller/manager.h), called
// as `ruleplane controller` calls it, against a real kube-apiserver: it
// reconciles DEP-01's scale-up example from its watch cache, serves /readyz,
// and returns once asked to stop; a journal it cannot open is an error before
// anything starts.
#include "controller/manager.h"

#include <gtest/gtest.h>

#include <atomic>
#include <sstream>
#include <thread>

#include "cli/rule_library.h"
#include "engine/common/json_value.h"
#include "platform/http_client.h"
#include "platform/process.h"
#include "tests/support/kube_test_bed.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {
namespace {

struct Rules {
  std::unique_ptr<cli::RuleLibrary> library;
  ManagerOptions options;
};

Rules ManagerOptionsFor(const KubeConfig& kube, const std::string& journal) {
  Rules rules;
  std::ostringstream err;
  rules.library = cli::LoadRuleLibrary(cli::DefaultRuleReferences(), err);
  EXPECT_NE(rules.library, nullptr) << err.str();
  rules.options.kube = kube;
  rules.options.namespace_name = "default";
  rules.options.rule_sets = cli::SelectForSubject(*rules.library, "EtcdCluster", err);
  rules.options.catalogue = rules.library->catalogue.get();
  rules.options.journal_path = journal;
  rules.options.reconciler.allow_disruptive = true;
  rules.options.resync_period = std::chrono::seconds(1);
  rules.options.leader_elect = false;
  rules.options.metrics_bind_address = "127.0.0.1:" + std::to_string(FreeLoopbackPort());
  return rules;
}

TEST(Manager, ReconcilesFromItsWatchCacheAndReturnsWhenStopped) {
  TempDir dir("manager");
  auto bed = KubeTestBed::Start(dir.path(), {.example = "scale-up.json"});
  ASSERT_TRUE(bed.ok()) << bed.error().message;
  KubeClient& admin = (*bed)->admin();
  RequestLog& log = (*bed)->log();

  Rules rules = ManagerOptionsFor((*bed)->kube().AdminConfig(), dir.path() + "/journal.db");
  std::atomic<bool> stop{false};
  std::ostringstream manager_log;
  Status ran;
  std::thread manager([&] { ran = RunManager(rules.options, stop, manager_log); });

  const bool scaled = Eventually(
      [&] {
        auto sts = admin.Get({"apps/v1", "statefulsets", "default", "etcd-main", ""}, log);
        return sts.ok() && ValueAt(*sts, {"spec", "replicas"}) != nullptr &&
               ValueAt(*sts, {"spec", "replicas"})->int_value() == 5;
      },
      std::chrono::seconds(60));
  EXPECT_TRUE(scaled);
  HttpClient http;
  auto ready = http.Send("GET", "http://" + rules.options.metrics_bind_address + "/readyz", "",
                         std::chrono::seconds(5));
  ASSERT_TRUE(ready.ok()) << ready.error().message;
  EXPECT_EQ(ready->status, 200);

  const auto stopping = std::chrono::steady_clock::now();
  stop = true;
  manager.join();
  EXPECT_LT(std::chrono::steady_clock::now() - stopping, std::chrono::seconds(5));
  EXPECT_TRUE(ran.ok()) << ran.error().message;
  EXPECT_NE(manager_log.str().find("\"msg\":\"started\""), std::string::npos) << manager_log.str();
  EXPECT_NE(manager_log.str().find("\"action\":\"ScaleStatefulSet\""), std::string::npos)
      << manager_log.str();
}

TEST(Manager, AJournalItCannotOpenIsAnErrorBeforeAnythingStarts) {
  TempDir dir("manager-journal");
  KubeConfig nowhere;
  nowhere.server = "http://127.0.0.1:1";
  Rules rules = ManagerOptionsFor(nowhere, dir.path() + "/no-such-directory/journal.db");
  std::atomic<bool> stop{false};
  std::ostringstream manager_log;
  const Status ran = RunManager(rules.options, stop, manager_log);
  ASSERT_FALSE(ran.ok());
  EXPECT_NE(ran.error().message.find("no-such-directory"), std::string::npos) << ran.error().message;
  EXPECT_EQ(manager_log.str(), "") << "nothing started";
}

}  // namespace
}  // namespace ruleplane::testing
