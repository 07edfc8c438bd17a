// ruleplane member-agent: the sidecar loop beside each etcd member.
#include <algorithm>
#include <atomic>
#include <csignal>
#include <iostream>

#include "cli/cluster_input.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/store_flags.h"
#include "engine/common/json_value.h"
#include "member/member_agent_loop.h"

namespace ruleplane::cli {
namespace {

constexpr const char* kMemberAgentUsage =
    R"(usage: ruleplane member-agent --name NAME --client-url URL --endpoints URL[,URL] --etcd NAME
                             [--peer-url URL] [--namespace NS] [--kubeconfig FILE] [--context NAME]
                             [--cacert FILE --cert FILE --key FILE]
                             [--backup-store DIR | --storage-provider Local|S3 ...]
                             [--schedule CRON] [--delta-snapshot-period DURATION]
                             [--delta-snapshot-memory-limit BYTES]
                             [--compress-snapshots true|false] [--compression-policy gzip|zlib]
                             [--garbage-collection-policy Exponential|LimitBased] [--max-backups N]
                             [--garbage-collection-period DURATION]
                             [--delta-snapshot-retention-period DURATION]
                             [--k8s-heartbeat-duration DURATION] [--once]
                             [--server-port PORT [--server-host IP]
                              [--server-cert FILE --server-key FILE [--server-ca FILE]
                               [--server-client-ca FILE
                                [--server-client-cert FILE --server-client-key FILE]]]
                              [--snapshot-request-interval DURATION]]

Beside an etcd member, every heartbeat (--k8s-heartbeat-duration, default 10s):
renews the member's Lease (named --name) with "<memberID>:<Leader|Member>"
while the member answers and votes; with --peer-url (the URL the member's
etcd advertises to its peers, as member-init's), a healthy member that the
member list has at another peer URL is updated to it there, as
etcd-backup-restore's sidecar does at its start. Apart from the heartbeat, so that a long
snapshot never delays the Lease: when the member leads and a backup store is
given, takes the full snapshot --schedule asks for (cron, default
"0 */1 * * *": hourly) or a delta every --delta-snapshot-period (default 20s;
under 1s, no deltas), of at most about --delta-snapshot-memory-limit bytes of
events (default 10485760; the rest in the next delta), compressed unless
--compress-snapshots false (default gzip), and renews the <etcd>-full-snap
and <etcd>-delta-snap Leases with their revisions, and sets the Etcd's
BackupReady condition (True, BackupSucceeded, after an upload; False,
BackupFailed, after a failed one) when it changes. Every
--garbage-collection-period (default 1m), the leader deletes old backups:
--garbage-collection-policy Exponential (the default: hourly fulls of today,
daily of the last week, weekly of the last 5 weeks) or LimitBased (the newest
--max-backups fulls, default 7; ruleplane counts periods of --schedule, so
that fulls taken on request replace each other instead of pushing older
backups out), and older streams' deltas beyond
--delta-snapshot-retention-period (default 0); never the newest full snapshot
nor the deltas after it, nor the newest .final one. Durations as Go writes them:
20s, 1m30s, 500ms. Flags and defaults are etcd-backup-restore's.
One JSON line per heartbeat, and one per backup round that took, failed or
collected something, on standard output. SIGTERM ends a backup in progress
(its partial download removed) and exits 0. --once runs one heartbeat and then
the backup and collection, and exits (1 when it found the member unhealthy or
failed).
With --server-port (etcd-backup-restore's flag; not served without it), it
serves etcd-backup-restore's HTTP API on --server-host (default 0.0.0.0, all
addresses): /healthz, /snapshot/full[?final=true] and /snapshot/delta (taken
now by the leader; another member forwards them to the leader's agent, at the
leading member's client host with the same port; at most one of each kind
per --snapshot-request-interval, default 30s, 0 = no limit, else 429),
/snapshot/latest, and /metrics (etcdbr_* metrics). With --server-cert and --server-key (etcd-backup-
restore's flags, etcd-druid's spec.backup.tls), over HTTPS only; a forwarded
request then verifies the leader's agent against --server-ca (ruleplane's
own flag; default: the system's CAs). With --server-client-ca (ruleplane's), the
snapshot routes answer only a client certificate of that CA (403 without one;
/healthz and /metrics stay open), and a forwarded request presents
--server-client-cert and --server-client-key.
)";

// etcd-backup-restore's --compression-policy names; its "lzw" is read
// (restores take .Z snapshots) but not written by ruleplane.
bool CompressionSuffixOf(const std::string& policy, std::string& suffix, std::ostream& err) {
  if (policy == "gzip") {
    suffix = ".gz";
  } else if (policy == "zlib") {
    suffix = ".zlib";
  } else if (policy == "lzw") {
    err << "ruleplane: --compression-policy lzw: ruleplane restores lzw snapshots but does not write "
           "them; use gzip or zlib\n";
    return false;
  } else {
    err << "ruleplane: --compression-policy must be gzip or zlib, got '" << policy << "'\n";
    return false;
  }
  return true;
}

// Lock-free, so safe to set from the signal handler; also the clients' cancel flag.
std::atomic<bool> agent_stopping{false};
static_assert(std::atomic<bool>::is_always_lock_free);

}  // namespace

int RunMemberAgent(const Args& args, std::ostream& out, std::ostream& err) {
  const std::string usage = std::string(kMemberAgentUsage) + kStoreFlagsUsage;
  if (HelpRequested(args)) return PrintUsage(usage, out);
  Flags flags(WithStoreFlags({{"--name"},
                              {"--client-url"},
                              {"--peer-url"},
                              {"--endpoints"},
                              {"--etcd"},
                              {"--namespace"},
                              {"--kubeconfig"},
                              {"--context"},
                              {"--cacert"},
                              {"--cert"},
                              {"--key"},
                              {"--schedule"},
                              {"--delta-snapshot-period"},
                              {"--delta-snapshot-memory-limit"},
                              {"--compress-snapshots"},
                              {"--compression-policy"},
                              {"--garbage-collection-policy"},
                              {"--max-backups"},
                              {"--garbage-collection-period"},
                              {"--delta-snapshot-retention-period"},
                              {"--k8s-heartbeat-duration"},
                              {"--server-port"},
                              {"--server-host"},
                              {"--server-cert"},
                              {"--server-key"},
                              {"--server-ca"},
                              {"--server-client-ca"},
                              {"--server-client-cert"},
                              {"--server-client-key"},
                              {"--snapshot-request-interval"},
                              {"--once", false}}));
  if (!flags.Parse(args, err, usage)) return kExitUsage;
  if (!flags.Require({"--name", "--client-url", "--endpoints", "--etcd"}, err, usage)) return kExitUsage;
  MemberAgentLoopOptions options;
  MemberAgentOptions& agent = options.agent;
  std::chrono::nanoseconds heartbeat = agent.heartbeat;
  bool compress = true;
  std::chrono::nanoseconds delta_retention{0};
  std::chrono::nanoseconds request_interval = agent.snapshot_request_interval;
  int64_t server_port = 0;
  if (!flags.GetCount("--server-port", server_port, err)) return kExitUsage;
  if (server_port > 65535) {
    err << "ruleplane: --server-port must be a port number, got " << server_port << "\n";
    return kExitUsage;
  }
  options.server_port = static_cast<int>(server_port);
  options.server_host = flags.Get("--server-host", options.server_host);
  if (flags.Has("--server-cert") != flags.Has("--server-key")) {
    err << "ruleplane: give --server-cert and --server-key together\n" << usage;
    return kExitUsage;
  }
  if (flags.Has("--server-client-ca") && !flags.Has("--server-cert")) {
    err << "ruleplane: --server-client-ca needs --server-cert and --server-key (client certificates are "
           "asked for over HTTPS)\n"
        << usage;
    return kExitUsage;
  }
  if (flags.Has("--server-client-cert") != flags.Has("--server-client-key")) {
    err << "ruleplane: give --server-client-cert and --server-client-key together\n" << usage;
    return kExitUsage;
  }
  if (flags.Has("--server-cert")) {
    options.server_tls =
        HttpServerTls{flags.Get("--server-cert"), flags.Get("--server-key"), flags.Get("--server-client-ca")};
  }
  options.server_ca = flags.Get("--server-ca");
  options.server_client_cert = flags.Get("--server-client-cert");
  options.server_client_key = flags.Get("--server-client-key");
  if (!flags.GetDuration("--k8s-heartbeat-duration", heartbeat, err) ||
      !flags.GetDuration("--delta-snapshot-period", agent.delta_period, err) ||
      !flags.GetCount("--delta-snapshot-memory-limit", agent.delta_memory_limit, err) ||
      !flags.GetBool("--compress-snapshots", compress, err) ||
      !CompressionSuffixOf(flags.Get("--compression-policy", "gzip"), agent.compression_suffix, err) ||
      !flags.GetCount("--max-backups", agent.retention.max_backups, err) ||
      !flags.GetDuration("--garbage-collection-period", agent.garbage_collection_period, err) ||
      !flags.GetDuration("--delta-snapshot-retention-period", delta_retention, err) ||
      !flags.GetDuration("--snapshot-request-interval", request_interval, err)) {
    return kExitUsage;
  }
  agent.snapshot_request_interval = std::chrono::ceil<std::chrono::seconds>(request_interval);
  auto policy = ParseGarbageCollectionPolicy(flags.Get("--garbage-collection-policy", "Exponential"));
  if (!policy.ok()) {
    err << "ruleplane: --garbage-collection-policy: " << policy.error().message << "\n";
    return kExitUsage;
  }
  agent.retention.policy = *policy;
  // etcd-backup-restore refuses to start so (SnapshotterConfig.Validate).
  if (agent.retention.policy == GarbageCollectionPolicy::kLimitBased && agent.retention.max_backups < 1) {
    err << "ruleplane: --max-backups must be at least 1 with --garbage-collection-policy LimitBased\n";
    return kExitUsage;
  }
  // Whole seconds, rounded up: a delta is never collected earlier than asked.
  agent.retention.delta_retention = std::chrono::ceil<std::chrono::seconds>(delta_retention);
  if (!compress) agent.compression_suffix.clear();
  auto config = ResolveKubeConfig(flags.Get("--kubeconfig"), flags.Get("--context"));
  if (!config.ok()) {
    err << "ruleplane: member-agent: " << config.error().message << "\n";
    return kExitUsage;
  }
  agent.member_name = flags.Get("--name");
  agent.etcd_name = flags.Get("--etcd");
  agent.client_url = flags.Get("--client-url");
  agent.peer_url = flags.Get("--peer-url");
  agent.namespace_name = flags.Get("--namespace", config->namespace_name);
  agent.full_snapshot_lease = flags.Get("--etcd") + "-full-snap";
  agent.delta_snapshot_lease = flags.Get("--etcd") + "-delta-snap";
  agent.schedule = flags.Get("--schedule", agent.schedule);
  // Lease durations are whole seconds: at least one.
  agent.heartbeat = std::max(std::chrono::ceil<std::chrono::seconds>(heartbeat), std::chrono::seconds(1));
  std::vector<std::string> client_url, peer_url;
  if (!flags.GetUrls("--endpoints", options.etcd.endpoints, err) ||
      !flags.GetUrls("--client-url", client_url, err) || !flags.GetUrls("--peer-url", peer_url, err))
    return kExitUsage;
  options.etcd.tls = TlsFromFlags(flags);
  options.kube = *config;
  if (StoreGiven(flags) && !StoreConfigFromFlags(flags, options.store, err)) return kExitUsage;
  if (options.store.provider != "Local") agent.store_credentials = options.store.credentials;

  if (flags.Has("--once")) {
    const AgentRound round = RunMemberAgentOnce(options);
    out << FormatJson(round.ToValue()) << std::endl;
    return round.healthy && round.error.empty() ? kExitOk : kExitFinding;
  }
  std::signal(SIGTERM, [](int) { agent_stopping = true; });
  std::signal(SIGINT, [](int) { agent_stopping = true; });
  RunMemberAgentLoop(options, agent_stopping, out);
  return kExitOk;
}

}  // namespace ruleplane::cli
