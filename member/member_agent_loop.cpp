#include "member/member_agent_loop.h"

#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

#include "engine/common/json_value.h"
#include "member/member_api.h"
#include "member/member_backups.h"
#include "platform/http_client.h"
#include "platform/http_server.h"

namespace ruleplane {
namespace {

// How long an API request waits for its snapshot: the backup thread may
// first finish a scheduled one (BackupOptions' timeout, 5 minutes) and then
// takes it (as long again).
constexpr std::chrono::minutes kSnapshotRequestTimeout{11};

// Until `period` after `started`, or until `stop`; false when stopping.
bool WaitUntilNext(std::chrono::steady_clock::time_point started, std::chrono::seconds period,
                   const std::atomic<bool>& stop) {
  while (!stop && std::chrono::steady_clock::now() - started < period) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return !stop;
}

// The backups' own clients and store; absent without a backup store.
struct BackupSide {
  BackupSide(const MemberAgentLoopOptions& options, std::unique_ptr<ObjectStore> objects,
             const std::atomic<bool>* stop)
      : cluster(options.etcd),
        kube(options.kube),
        store(std::move(objects)),
        backups(options.agent, cluster, kube, store, stop) {}
  EtcdClient cluster;
  KubeClient kube;
  BackupStore store;
  MemberBackups backups;
};

// The store named by the options (the command checked them before).
Result<std::unique_ptr<BackupSide>> OpenBackupSide(const MemberAgentLoopOptions& options,
                                                   const std::atomic<bool>* stop) {
  auto objects = OpenObjectStore(options.store);
  if (!objects.ok()) return objects.error();
  return std::make_unique<BackupSide>(options, std::move(*objects), stop);
}

// The API's side of the agent: snapshots through the backup thread, the
// store listed through a store of its own (a store's clients serve one
// thread), forwarding with a client per request.
class LoopApi : public MemberApiBackend {
 public:
  LoopApi(BackupSide* side, std::unique_ptr<BackupStore> store, const std::atomic<bool>& healthy,
          const std::atomic<uint64_t>& cluster_id, const std::atomic<bool>& stop, TlsConfig forward_tls)
      : side_(side),
        store_(std::move(store)),
        healthy_(healthy),
        cluster_id_(cluster_id),
        stop_(stop),
        forward_tls_(std::move(forward_tls)) {}

  bool Healthy() override { return healthy_; }
  bool BacksUp() override { return side_ != nullptr && store_ != nullptr; }
  RequestedSnapshot TakeSnapshot(const SnapshotRequest& request) override {
    return side_->backups.Request(request, kSnapshotRequestTimeout);
  }
  Result<BackupStoreListing> ListStore() override {
    std::lock_guard<std::mutex> lock(store_mutex_);
    return store_->List();
  }
  uint64_t ClusterId() override { return cluster_id_; }
  std::string StorePrefix() override { return store_ ? store_->objects().PrefixName() : ""; }
  std::string MetricsText() override {
    return side_ ? side_->backups.metrics().Text() : BackupMetrics().Text();
  }
  Result<HttpAnswer> Send(const std::string& method, const std::string& url) override {
    HttpClient client(forward_tls_);
    client.set_cancel(&stop_);
    HttpExchange exchange;
    exchange.method = method;
    exchange.url = url;
    exchange.timeout = kSnapshotRequestTimeout + std::chrono::minutes(1);
    auto response = client.Exchange(exchange);
    if (!response.ok()) return response.error();
    const std::string type = response->Header("content-type");
    return HttpAnswer{static_cast<int>(response->status), type.empty() ? "text/plain" : type, response->body};
  }

 private:
  BackupSide* side_;
  std::unique_ptr<BackupStore> store_;
  std::mutex store_mutex_;
  const std::atomic<bool>& healthy_;
  const std::atomic<uint64_t>& cluster_id_;
  const std::atomic<bool>& stop_;
  TlsConfig forward_tls_;
};

}  // namespace

AgentRound RunMemberAgentOnce(const MemberAgentLoopOptions& options) {
  EtcdClient cluster(options.etcd);
  KubeClient kube(options.kube);
  MemberAgent agent(options.agent, cluster, kube);
  AgentRound round = agent.Heartbeat(std::chrono::system_clock::now());
  if (round.healthy && !options.store.provider.empty()) {
    auto side = OpenBackupSide(options, nullptr);
    if (!side.ok()) {
      round.AddError("backup store: " + side.error().message);
      return round;
    }
    const BackupRound backup = (*side)->backups.Run(std::chrono::system_clock::now());
    round.backup = backup.backup;
    round.collected = backup.collected;
    if (!backup.error.empty()) round.AddError(backup.error);
  }
  return round;
}

void RunMemberAgentLoop(const MemberAgentLoopOptions& options, const std::atomic<bool>& stop,
                        std::ostream& log) {
  EtcdClient cluster(options.etcd);
  KubeClient kube(options.kube);
  cluster.set_cancel(&stop);
  kube.set_cancel(&stop);
  MemberAgent agent(options.agent, cluster, kube);
  std::unique_ptr<BackupSide> side;
  if (!options.store.provider.empty()) {
    // The command checked the store's configuration: this fails only when
    // the credentials changed in between. The heartbeat goes on without backups.
    auto opened = OpenBackupSide(options, &stop);
    if (opened.ok()) {
      side = std::move(*opened);
      side->cluster.set_cancel(&stop);
      side->kube.set_cancel(&stop);
    } else {
      log << FormatJson(Value::MakeMap(
                 {{Value::String("error"), Value::String("backup store: " + opened.error().message)}}))
          << std::endl;
    }
  }
  std::mutex printing;
  auto print = [&](const Value& line) {
    std::lock_guard<std::mutex> lock(printing);
    log << FormatJson(line) << std::endl;
  };
  std::atomic<bool> healthy{false};
  std::atomic<uint64_t> cluster_id{0};
  std::unique_ptr<LoopApi> api;
  std::unique_ptr<HttpServer> server;
  if (options.server_port > 0) {
    std::unique_ptr<BackupStore> listing;
    if (side) {
      auto objects = OpenObjectStore(options.store);
      if (objects.ok()) listing = std::make_unique<BackupStore>(std::move(*objects));
    }
    TlsConfig forward_tls;
    forward_tls.ca_file = options.server_ca;
    forward_tls.cert_file = options.server_client_cert;
    forward_tls.key_file = options.server_client_key;
    api = std::make_unique<LoopApi>(side.get(), std::move(listing), healthy, cluster_id, stop, forward_tls);
    HttpServerOptions server_options;
    server_options.tls = options.server_tls;
    auto started = HttpServer::Start(options.server_host + ":" + std::to_string(options.server_port),
                                     HttpServer::RequestHandler([&](const HttpRequest& request) {
                                       return ServeMemberApi(
                                           request, *api, options.server_port, options.server_tls.has_value(),
                                           options.server_tls && !options.server_tls->client_ca_file.empty());
                                     }),
                                     server_options);
    if (started.ok()) {
      server = std::move(*started);
    } else {
      print(Value::MakeMap({{Value::String("error"), Value::String("server: " + started.error().message)}}));
    }
  }
  std::thread backup_thread;
  if (side) {
    backup_thread = std::thread([&] {
      auto next = std::chrono::steady_clock::now();
      while (true) {
        std::vector<BackupRound> served;
        side->backups.ServeRequests(served);
        for (const BackupRound& round : served) print(round.ToValue());
        if (std::chrono::steady_clock::now() >= next) {
          next = std::chrono::steady_clock::now() + options.agent.heartbeat;
          const BackupRound round = side->backups.Run(std::chrono::system_clock::now());
          if (!round.idle()) print(round.ToValue());
        }
        // Wakes at once for a request from the API.
        if (!side->backups.WaitForWork(next, stop)) break;
      }
    });
  }
  while (true) {
    const auto started = std::chrono::steady_clock::now();
    const AgentRound round = agent.Heartbeat(std::chrono::system_clock::now());
    healthy = round.healthy;
    if (round.cluster_id != 0) cluster_id = round.cluster_id;
    print(round.ToValue());
    if (!WaitUntilNext(started, options.agent.heartbeat, stop)) break;
  }
  healthy = false;
  if (backup_thread.joinable()) backup_thread.join();
  // Requests still waiting are answered, so that the server's slow replies end.
  if (side) side->backups.Close();
  server.reset();
}

}  // namespace ruleplane
