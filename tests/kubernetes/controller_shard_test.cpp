// `ruleplane controller --shard I/N` against a real kube-apiserver: three
// replicas, two of shard 0/2 and one of shard 1/2, over six Etcds. Each Etcd
// is reconciled by the leader of its shard alone (the per-Etcd gauges of each
// replica's /metrics), the standby of shard 0 reconciles nothing, and each
// shard's Lease names its leader. --selector narrows the Etcds to those with
// the labels; a malformed --shard or --selector is a usage error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "controller/controller_shard.h"
#include "engine/common/json_value.h"
#include "platform/http_client.h"
#include "platform/process.h"
#include "tests/run_ruleplane.h"
#include "tests/support/kube_objects.h"
#include "tests/support/kube_test_bed.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {
namespace {

// pink-of-health.json (a healthy cluster: an empty plan) as the Etcd `name`
// and its objects, in "default"; `labels_json` is merged into the Etcd's
// labels (the example's are gardener.cloud/role=controlplane, role=main).
Status CreateHealthyEtcd(KubeClient& admin, const std::string& directory, const std::string& name,
                         const std::string& labels_json = "{}") {
  auto example = LoadJsonFile(ExamplePath("pink-of-health.json"));
  if (!example.ok()) return example.error();
  std::string text = FormatJson(*example);
  const std::string original = "etcd-main";
  for (size_t at = text.find(original); at != std::string::npos; at = text.find(original, at + name.size()))
    text.replace(at, original.size(), name);
  const std::string path = directory + "/" + name + ".json";
  std::ofstream(path) << text;
  RequestLog log;
  auto created = CreateExampleObjects(admin, path, log);
  if (!created.ok()) return created.error();
  auto labels = ParseJson(labels_json);
  if (!labels.ok()) return labels.error();
  auto patched = admin.MergePatch(
      {"druid.gardener.cloud/v1alpha1", "etcds", "default", name, ""},
      Value::MakeMap({{Value::String("metadata"), Value::MakeMap({{Value::String("labels"), *labels}})}}),
      log);
  if (!patched.ok()) return patched.error();
  return {};
}

// The Etcds a replica has reconciled: the etcd labels of its per-cluster gauges.
std::set<std::string> Reconciled(HttpClient& http, int port) {
  std::set<std::string> keys;
  auto metrics =
      http.Send("GET", "http://127.0.0.1:" + std::to_string(port) + "/metrics", "", std::chrono::seconds(5));
  if (!metrics.ok()) return keys;
  std::istringstream lines(metrics->body);
  const std::string prefix = "ruleplane_cluster_desired_members{etcd=\"";
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(prefix, 0) == 0)
      keys.insert(line.substr(prefix.size(), line.find('"', prefix.size()) - prefix.size()));
  }
  return keys;
}

bool Leads(HttpClient& http, int port) {
  auto metrics =
      http.Send("GET", "http://127.0.0.1:" + std::to_string(port) + "/metrics", "", std::chrono::seconds(5));
  return metrics.ok() && metrics->body.find("\nruleplane_leader 1\n") != std::string::npos;
}

std::string Hostname() {
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  return host;
}

struct Replica {
  std::string shard;
  int port = 0;
  std::string log;
  ChildProcess process;
};

TEST(ControllerShard, EachEtcdIsReconciledByTheLeaderOfItsShardOnly) {
  TempDir dir("controller-shards");
  auto bed = KubeTestBed::Start(dir.path());
  ASSERT_TRUE(bed.ok()) << bed.error().message;
  KubeClient& admin = (*bed)->admin();
  RequestLog& log = (*bed)->log();
  std::set<std::string> expected[2];
  for (const char* name : {"etcd-a", "etcd-b", "etcd-c", "etcd-d", "etcd-e", "etcd-f"}) {
    Status created = CreateHealthyEtcd(admin, dir.path(), name);
    ASSERT_TRUE(created.ok()) << name << ": " << created.error().message;
    const std::string key = std::string("default/") + name;
    expected[Fnv1a64(key) % 2].insert(key);
  }
  ASSERT_FALSE(expected[0].empty());
  ASSERT_FALSE(expected[1].empty()) << "the names must fall into both shards";

  std::vector<Replica> replicas;
  for (const char* shard : {"0/2", "0/2", "1/2"}) {
    auto started = (*bed)->StartController(
        {.name = "controller-" + std::to_string(replicas.size()),
         .flags = {"--shard", shard, "--resync-period", "1", "--leader-elect-lease-duration", "3",
                   "--leader-elect-renew-deadline", "2", "--leader-elect-retry-period", "1"}});
    ASSERT_TRUE(started.ok()) << started.error().message;
    replicas.push_back({shard, started->metrics_port, started->log, std::move(started->process)});
  }
  HttpClient http;
  auto logs = [&] {
    std::string all;
    for (const Replica& replica : replicas) all += "--- " + replica.shard + ":\n" + Slurp(replica.log);
    return all;
  };
  ASSERT_TRUE(Eventually([&] { return Leads(http, replicas[0].port) || Leads(http, replicas[1].port); },
                         std::chrono::seconds(30)))
      << logs();
  const size_t leader = Leads(http, replicas[0].port) ? 0 : 1, standby = 1 - leader;
  ASSERT_TRUE(Eventually([&] { return Leads(http, replicas[2].port); }, std::chrono::seconds(30))) << logs();

  // Every Etcd of a shard reconciled by its leader (and a few resyncs more,
  // so that one reconciled by the wrong replica would show).
  ASSERT_TRUE(Eventually([&] { return Reconciled(http, replicas[leader].port) == expected[0]; },
                         std::chrono::seconds(30)))
      << logs();
  ASSERT_TRUE(
      Eventually([&] { return Reconciled(http, replicas[2].port) == expected[1]; }, std::chrono::seconds(30)))
      << logs();
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_EQ(Reconciled(http, replicas[leader].port), expected[0]);
  EXPECT_EQ(Reconciled(http, replicas[2].port), expected[1]);
  EXPECT_TRUE(Reconciled(http, replicas[standby].port).empty()) << "the standby of shard 0 reconciled";
  EXPECT_FALSE(Leads(http, replicas[standby].port));

  // One Lease per shard, held by its leader.
  const std::string host = Hostname();
  for (const auto& [lease, holder] :
       {std::pair{"ruleplane-controller-shard-0-of-2", replicas[leader].process.pid()},
        std::pair{"ruleplane-controller-shard-1-of-2", replicas[2].process.pid()}}) {
    auto got = admin.Get({"coordination.k8s.io/v1", "leases", "default", lease, ""}, log);
    ASSERT_TRUE(got.ok()) << lease << ": " << got.error().message;
    const Value* identity = ValueAt(*got, {"spec", "holderIdentity"});
    ASSERT_NE(identity, nullptr) << lease;
    EXPECT_EQ(identity->string_value(), host + "_" + std::to_string(holder)) << lease;
  }
  EXPECT_FALSE(
      admin.Get({"coordination.k8s.io/v1", "leases", "default", "ruleplane-controller", ""}, log).ok())
      << "sharded replicas do not use the unsharded Lease";

  for (Replica& replica : replicas) EXPECT_EQ(replica.process.Stop(std::chrono::seconds(10)), 0) << logs();
}

TEST(ControllerShard, SelectorTakesOnlyTheEtcdsWithItsLabels) {
  TempDir dir("controller-selector");
  auto bed = KubeTestBed::Start(dir.path());
  ASSERT_TRUE(bed.ok()) << bed.error().message;
  KubeClient& admin = (*bed)->admin();
  ASSERT_TRUE(CreateHealthyEtcd(admin, dir.path(), "etcd-blue", R"({"fleet":"blue"})").ok());
  ASSERT_TRUE(CreateHealthyEtcd(admin, dir.path(), "etcd-green", R"({"fleet":"green"})").ok());
  ASSERT_TRUE(CreateHealthyEtcd(admin, dir.path(), "etcd-blue-too", R"({"fleet":"blue"})").ok());

  auto controller = (*bed)->StartController(
      {.flags = {"--leader-elect", "false", "--selector", "fleet=blue,role=main", "--resync-period", "1"}});
  ASSERT_TRUE(controller.ok()) << controller.error().message;
  const std::string& controller_log = controller->log;
  const int port = controller->metrics_port;
  HttpClient http;
  const std::set<std::string> blue = {"default/etcd-blue", "default/etcd-blue-too"};
  ASSERT_TRUE(Eventually([&] { return Reconciled(http, port) == blue; }, std::chrono::seconds(30)))
      << Slurp(controller_log);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_EQ(Reconciled(http, port), blue) << Slurp(controller_log);
  EXPECT_EQ(controller->process.Stop(std::chrono::seconds(10)), 0) << Slurp(controller_log);
}

TEST(ControllerShard, AMalformedShardOrSelectorIsAUsageError) {
  for (const auto& [flags, named] :
       std::vector<std::pair<std::string, std::string>>{{"--shard 2/2", "--shard"},
                                                        {"--shard 1", "--shard"},
                                                        {"--shard a/b", "--shard"},
                                                        {"--selector fleet", "--selector"},
                                                        {"--selector =blue", "--selector"},
                                                        {"--selector 'fleet!=blue'", "--selector"},
                                                        {"--selector 'fleet in (blue)'", "--selector"}}) {
    const auto result = testing_support::Ruleplane("controller --kubeconfig /nonexistent " + flags);
    EXPECT_EQ(result.exit_code, 2) << flags << "\n" << result.err;
    EXPECT_TRUE(testing_support::Contains(result.err, named)) << flags << "\n" << result.err;
  }
}

}  // namespace
}  // namespace ruleplane::testing
