// The controller's calls to the members (etcd) and to their sidecars are
// fenced as its Kubernetes client is (issue 41, hazard 10): ClusterAdapters
// gives the members' client and each sidecar's the Kubernetes client's guard
// and cancellation, so that once the guard says the Lease is gone no request
// reaches a member or a sidecar (before, a deposed controller could still
// defragment a member or move the leader). The members and the sidecar are
// one in-process server here, which counts what reaches it.
#include "controller/cluster_adapters.h"

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/common/snapshot.h"
#include "platform/http_server.h"
#include "tests/support/source_paths.h"

namespace ruleplane {
namespace {

PlanStep Step(std::string adapter, std::string action, std::string target, Value::Map params) {
  PlanStep step;
  step.adapter = std::move(adapter);
  step.action = std::move(action);
  step.target = std::move(target);
  step.params = Value::MakeMap(std::move(params));
  return step;
}

TEST(ClusterAdapters, NoMemberOrSidecarCallGoesOutOnceTheKubernetesClientsGuardRefuses) {
  std::atomic<int> requests{0};
  auto server =
      HttpServer::Start("127.0.0.1:0", HttpServer::RequestHandler([&](const HttpRequest&) -> HttpReply {
                          ++requests;
                          return HttpAnswer{200, "application/json", "{}"};
                        }));
  ASSERT_TRUE(server.ok()) << server.error().message;
  const int port = (*server)->port();

  // A member Pod at the server's address, whose sidecar listens on its port.
  std::ifstream in(std::string(testing::SourceDir()) + "/examples/snapshots/pink-of-health.json");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json document = nlohmann::json::parse(text.str());
  for (auto& pod : document["pods"]) pod["status"]["podIP"] = "127.0.0.1";
  document["etcd"]["spec"]["backup"]["port"] = port;
  auto snapshot = ParseSnapshot(document.dump());
  ASSERT_TRUE(snapshot.ok()) << snapshot.error().message;

  bool leading = true;
  KubeConfig config;
  config.server = "http://127.0.0.1:" + std::to_string(port);
  KubeClient kube(config);
  kube.set_guard([&]() -> Status {
    if (leading) return {};
    return Error{ErrorCode::kFailedPrecondition, "not sent: this replica does not hold the lease", {}};
  });
  MemberEndpoints members;
  members.config =
      EtcdClientConfig{{"http://127.0.0.1:" + std::to_string(port)}, {}, std::chrono::seconds(3)};
  ClusterAdapters adapters(kube, *snapshot, &members);

  const PlanStep remove =
      Step("etcd", "RemoveMember", "etcd-main-2", {{Value::String("name"), Value::String("etcd-main-2")}});
  const PlanStep snapshot_step = Step("backup-sidecar", "TriggerFullSnapshot", "etcd-main", {});
  auto ask = [&](const PlanStep& step) {
    RequestLog log;
    auto done = adapters.set().Find(step.adapter)->IsDone(step, log);
    return done.ok() ? std::string("answered") : done.error().message;
  };
  // While leading, both reach the server (else the rest would prove nothing).
  const std::string leading_member = ask(remove);
  EXPECT_GT(requests.load(), 0) << "the member list was never asked: " << leading_member;
  const int after_member = requests.load();
  const std::string leading_sidecar = ask(snapshot_step);
  EXPECT_GT(requests.load(), after_member)
      << "neither the members nor the sidecar were asked: " << leading_sidecar;

  leading = false;
  const int before = requests.load();
  EXPECT_NE(ask(remove).find("does not hold the lease"), std::string::npos) << ask(remove);
  EXPECT_NE(ask(snapshot_step).find("does not hold the lease"), std::string::npos) << ask(snapshot_step);
  EXPECT_EQ(requests.load(), before) << "a request reached a member or a sidecar after the Lease was gone";
}

}  // namespace
}  // namespace ruleplane
