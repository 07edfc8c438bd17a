// ruleplane member-agent: the sidecar loop beside each etcd member.
#include <algorithm>
#include <atomic>
#include <csignal>
#include <iostream>

#include "cli/cluster_input.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "engine/common/json_value.h"
#include "member/member_agent_loop.h"

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
  MemberAgentLoopOptions options;
  MemberAgentOptions& agent = options.agent;
  agent.member_name = flags.Get("--name");
  agent.etcd_name = flags.Get("--etcd");
  agent.client_url = flags.Get("--client-url");
  agent.namespace_name = flags.Get("--namespace", config->namespace_name);
  agent.full_snapshot_lease = flags.Get("--etcd") + "-full-snap";
  agent.delta_snapshot_lease = flags.Get("--etcd") + "-delta-snap";
  agent.schedule = flags.Get("--schedule", agent.schedule);
  agent.delta_period = std::chrono::seconds(delta_period);
  agent.heartbeat = std::chrono::seconds(std::max<int64_t>(heartbeat, 1));
  std::vector<std::string> client_url;
  if (!flags.GetUrls("--endpoints", options.etcd.endpoints, err) ||
      !flags.GetUrls("--client-url", client_url, err))
    return kExitUsage;
  options.etcd.tls = TlsFromFlags(flags);
  options.kube = *config;
  options.backup_store = flags.Get("--backup-store");

  if (flags.Has("--once")) {
    const AgentRound round = RunMemberAgentOnce(options);
    out << FormatJson(round.ToValue()) << std::endl;
    return round.healthy && round.error.empty() ? kExitOk : kExitFinding;
  }
  std::signal(SIGTERM, [](int) { stopping = true; });
  std::signal(SIGINT, [](int) { stopping = true; });
  RunMemberAgentLoop(options, stopping, out);
  return kExitOk;
}

}  // namespace ruleplane::cli
