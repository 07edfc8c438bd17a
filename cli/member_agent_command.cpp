// ruleplane member-agent: the sidecar loop beside each etcd member.
#include <csignal>
#include <iostream>
#include <thread>

#include "adapters/member_agent.h"
#include "cli/cluster_input.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "engine/common/json_value.h"

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
while the member answers and votes; when it leads and --backup-store is given,
takes the full snapshot --schedule asks for (cron, default "0 */24 * * *") or
a delta every --delta-snapshot-period seconds (default 20), and renews the
<etcd>-full-snap and <etcd>-delta-snap Leases with their revisions, and sets
the Etcd's BackupReady condition (True, BackupSucceeded, after an upload;
False, BackupFailed, after a failed one) when it changes. One JSON
line per heartbeat on standard output. --once runs one heartbeat and exits
(1 when it found the member unhealthy or failed).
)";

volatile std::sig_atomic_t stopping = 0;

}  // namespace

int RunMemberAgent(const Args& args, std::ostream& out, std::ostream& err) {
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
  etcd_config.endpoints = flags.GetList("--endpoints");
  etcd_config.tls = TlsFromFlags(flags);
  EtcdClient cluster(etcd_config);
  KubeClient kube(*config);
  std::unique_ptr<BackupStore> store;
  if (flags.Has("--backup-store")) store = std::make_unique<BackupStore>(flags.Get("--backup-store"));
  MemberAgent agent(options, cluster, kube, store.get());

  std::signal(SIGTERM, [](int) { stopping = 1; });
  std::signal(SIGINT, [](int) { stopping = 1; });
  while (true) {
    const auto started = std::chrono::steady_clock::now();
    const AgentRound round = agent.Heartbeat(std::chrono::system_clock::now());
    out << FormatJson(round.ToValue()) << std::endl;
    if (flags.Has("--once")) return round.healthy && round.error.empty() ? kExitOk : kExitFinding;
    while (!stopping && std::chrono::steady_clock::now() - started < options.heartbeat) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (stopping) return kExitOk;
  }
}

}  // namespace ruleplane::cli
