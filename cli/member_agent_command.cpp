// ruleplane member-agent: the sidecar loop beside each etcd member.
#include <atomic>
#include <csignal>
#include <iostream>
#include <mutex>
#include <thread>

#include "cli/cluster_input.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "engine/common/json_value.h"
#include "member/member_agent.h"
#include "member/member_backups.h"

namespace ruleplane::cli {
namespace {

constexpr const char* kMemberAgentUsage =
    R"(usage: ruleplane member-agent --name NAME --client-url URL --endpoints URL[,URL] --etcd NAME
                             [--namespace NS] [--kubeconfig FILE] [--context NAME]
                             [--cacert FILE --cert FILE --key FILE] [--backup-store DIR]
                             [--schedule CRON] [--delta-snapshot-period SECONDS]
                             [--k8s-heartbeat-duration SECONDS] [--once]

Beside an etcd member, every heartbeat (--k8s-heartbeat-duration, default 10):
renews the member's Lease (named --name) with "<memberID>:<Leader|Member>"
while the member answers and votes. Apart from the heartbeat, so that a long
snapshot never delays the Lease: when the member leads and --backup-store is
given, takes the full snapshot --schedule asks for (cron, default
"0 */24 * * *") or a delta every --delta-snapshot-period seconds (default 20),
and renews the <etcd>-full-snap and <etcd>-delta-snap Leases with their
revisions, and sets the Etcd's BackupReady condition (True, BackupSucceeded,
after an upload; False, BackupFailed, after a failed one) when it changes.
One JSON line per heartbeat, and one per backup taken or failed, on standard
output. SIGTERM ends a backup in progress (its partial download removed) and
exits 0. --once runs one heartbeat and then the backup, and exits (1 when it
found the member unhealthy or failed).
)";

// Lock-free, so safe to set from the signal handler; also the clients' cancel flag.
std::atomic<bool> stopping{false};
static_assert(std::atomic<bool>::is_always_lock_free);

// Until `period` after `started`, or until stopping; false when stopping.
bool WaitUntilNext(std::chrono::steady_clock::time_point started, std::chrono::seconds period) {
  while (!stopping && std::chrono::steady_clock::now() - started < period) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return !stopping;
}

}  // namespace

int RunMemberAgent(const Args& args, std::ostream& out, std::ostream& err) {
  if (HelpRequested(args)) return PrintUsage(kMemberAgentUsage, out);
  Flags flags({{"--name"},
               {"--client-url"},
               {"--endpoints"},
               {"--etcd"},
               {"--namespace"},
               {"--kubeconfig"},
               {"--context"},
               {"--cacert"},
               {"--cert"},
               {"--key"},
               {"--backup-store"},
               {"--schedule"},
               {"--delta-snapshot-period"},
               {"--k8s-heartbeat-duration"},
               {"--once", false}});
  if (!flags.Parse(args, err, kMemberAgentUsage)) return kExitUsage;
  if (!flags.Require({"--name", "--client-url", "--endpoints", "--etcd"}, err, kMemberAgentUsage))
    return kExitUsage;
  int64_t heartbeat = 10, delta_period = 20;
  if (!flags.GetCount("--k8s-heartbeat-duration", heartbeat, err) ||
      !flags.GetCount("--delta-snapshot-period", delta_period, err)) {
    return kExitUsage;
  }
  auto config = ResolveKubeConfig(flags.Get("--kubeconfig"), flags.Get("--context"));
  if (!config.ok()) {
    err << "ruleplane: member-agent: " << config.error().message << "\n";
    return kExitUsage;
  }
  MemberAgentOptions options;
  options.member_name = flags.Get("--name");
  options.etcd_name = flags.Get("--etcd");
  options.client_url = flags.Get("--client-url");
  options.namespace_name = flags.Get("--namespace", config->namespace_name);
  options.full_snapshot_lease = flags.Get("--etcd") + "-full-snap";
  options.delta_snapshot_lease = flags.Get("--etcd") + "-delta-snap";
  options.schedule = flags.Get("--schedule", options.schedule);
  options.delta_period = std::chrono::seconds(delta_period);
  options.heartbeat = std::chrono::seconds(std::max<int64_t>(heartbeat, 1));

  EtcdClientConfig etcd_config;
  std::vector<std::string> client_url;
  if (!flags.GetUrls("--endpoints", etcd_config.endpoints, err) ||
      !flags.GetUrls("--client-url", client_url, err))
    return kExitUsage;
  etcd_config.tls = TlsFromFlags(flags);
  // The heartbeat and the backups each have clients of their own (a client
  // serves one thread), so neither waits for the other.
  EtcdClient cluster(etcd_config);
  KubeClient kube(*config);
  MemberAgent agent(options, cluster, kube);
  std::unique_ptr<BackupStore> store;
  if (flags.Has("--backup-store")) store = std::make_unique<BackupStore>(flags.Get("--backup-store"));
  EtcdClient backup_cluster(etcd_config);
  KubeClient backup_kube(*config);
  std::unique_ptr<MemberBackups> backups;
  if (store)
    backups = std::make_unique<MemberBackups>(options, backup_cluster, backup_kube, *store, &stopping);

  if (flags.Has("--once")) {
    AgentRound round = agent.Heartbeat(std::chrono::system_clock::now());
    if (round.healthy && backups) {
      const BackupRound backup = backups->Run(std::chrono::system_clock::now());
      round.backup = backup.backup;
      if (!backup.error.empty()) round.error += (round.error.empty() ? "" : "; ") + backup.error;
    }
    out << FormatJson(round.ToValue()) << std::endl;
    return round.healthy && round.error.empty() ? kExitOk : kExitFinding;
  }

  std::signal(SIGTERM, [](int) { stopping = true; });
  std::signal(SIGINT, [](int) { stopping = true; });
  for (EtcdClient* client : {&cluster, &backup_cluster}) client->set_cancel(&stopping);
  for (KubeClient* client : {&kube, &backup_kube}) client->set_cancel(&stopping);
  std::mutex printing;
  auto print = [&](const Value& line) {
    std::lock_guard<std::mutex> lock(printing);
    out << FormatJson(line) << std::endl;
  };
  std::thread backup_thread;
  if (backups) {
    backup_thread = std::thread([&] {
      while (true) {
        const auto started = std::chrono::steady_clock::now();
        const BackupRound round = backups->Run(std::chrono::system_clock::now());
        if (!round.idle()) print(round.ToValue());
        if (!WaitUntilNext(started, options.heartbeat)) break;
      }
    });
  }
  while (true) {
    const auto started = std::chrono::steady_clock::now();
    print(agent.Heartbeat(std::chrono::system_clock::now()).ToValue());
    if (!WaitUntilNext(started, options.heartbeat)) break;
  }
  if (backup_thread.joinable()) backup_thread.join();
  return kExitOk;
}

}  // namespace ruleplane::cli
