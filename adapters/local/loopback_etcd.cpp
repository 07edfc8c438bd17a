#include "adapters/local/loopback_etcd.h"

#include <chrono>
#include <thread>
#include <vector>

#include "adapters/etcd/etcd_client.h"

namespace ruleplane {

Result<LoopbackEtcd> StartLoopbackEtcd(const std::string& name, const std::string& data_dir,
                                       const std::string& log_path, RequestLog& log) {
  constexpr int kStartAttempts = 4;
  LoopbackEtcd etcd;
  for (int attempt = 1;; ++attempt) {
    const int client_port = FreeLoopbackPort(), peer_port = FreeLoopbackPort();
    etcd.client_url = "http://127.0.0.1:" + std::to_string(client_port);
    const std::string peer = "http://127.0.0.1:" + std::to_string(peer_port);
    const std::vector<std::string> argv = {
        "etcd", "--name", name, "--data-dir", data_dir, "--listen-client-urls", etcd.client_url,
        "--advertise-client-urls", etcd.client_url, "--listen-peer-urls", peer,
        "--initial-advertise-peer-urls", peer, "--initial-cluster", name + "=" + peer,
        // etcd-backup-restore's embedded etcd quota: 3.4's default of
        // 2 GiB would refuse every put on a larger restored database.
        "--quota-backend-bytes", "8589934592"};
    const std::uintmax_t log_start = LogSize(log_path);
    if (log.Record(Request{Request::Kind::kCommand, argv[0], "", {argv.begin() + 1, argv.end()}, "", true})) {
      auto started = ChildProcess::Start(argv, log_path);
      if (!started.ok()) return started.error();
      etcd.process = std::move(*started);
    }
    if (log.dry_run()) return etcd;
    EtcdClient probe_api(EtcdClientConfig{{etcd.client_url}, {}, std::chrono::seconds(10)});
    RequestLog probe;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    bool lost_port = false;
    while (true) {
      auto status = probe_api.MemberStatus(etcd.client_url, probe);
      if (status.ok()) {
        etcd.revision = status->revision;
        return etcd;
      }
      if (!etcd.process.running()) {
        lost_port = LogSaysAddressInUse(log_path, log_start);
        break;
      }
      if (std::chrono::steady_clock::now() > deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!lost_port || attempt == kStartAttempts) {
      return Error{ErrorCode::kUnavailable, "etcd on " + data_dir + " did not start (" + log_path + ")", {}};
    }
  }
}

}  // namespace ruleplane
