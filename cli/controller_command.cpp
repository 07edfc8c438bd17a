// ruleplane controller: reconciles every Etcd object of a namespace (or of
// all namespaces) from a watch cache, through a work queue, until stopped.
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <optional>
#include <string>
#include <vector>

#include "cli/cluster_input.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/param_option.h"
#include "cli/rule_library.h"
#include "controller/manager.h"

namespace ruleplane::cli {
namespace {

constexpr const char* kControllerUsage =
    R"(usage: ruleplane controller [--kubeconfig FILE] [--context NAME] [-n NAMESPACE | --all-namespaces]
                            [--rules NAME@VERSION|PATH]... [--param NAME=VALUE]... [--journal FILE] [--dry-run]
                            [--allow-disruptive] [--auto-recover-quorum-loss]
                            [--min-disruptive-interval SECONDS] [--resync-period SECONDS]
                            [--metrics-bind-address HOST:PORT] [--leader-elect true|false]
                            [--leader-elect-lease-duration S] [--leader-elect-renew-deadline S]
                            [--leader-elect-retry-period S] [--leader-elect-resource-name NAME]
                            [--leader-elect-resource-namespace NS]
                            [--shard I/N] [--selector LABEL=VALUE[,...]] [--workers N]

Reconciles every Etcd object of the namespace (the kubeconfig's, or -n; or
every namespace) until SIGTERM: lists and watches the Etcds and the
StatefulSets, Leases, Pods and PodDisruptionBudgets they own into a cache;
queues an Etcd when any of them changes, and every --resync-period seconds
(default 30: decisions depend on time, such as a lease expiring); and for each
queued Etcd observes it from the cache, plans with the etcd-druid rules
(--rules: the selection, as for plan; its rule sets for member-init, such as
etcd-backup-restore@2, reach the members' init containers through the
StatefulSets it renders; without --rules, the bundled defaults everywhere),
executes the plan with at most one disruptive step (it pauses before a
second, which waits for the next observation), journaled in --journal
(default ruleplane-controller-journal.db), logs one JSON line per step,
records an Event per step performed, and keeps the Etcd's
status.lastOperation and status.lastErrors. A failed reconcile is retried
after a per-Etcd exponential backoff; a conflict (409) is re-observed.
--workers N (default 2) Etcds are reconciled side by side, one Etcd never by
two workers at once. No reconcile waits for the world: a step that is not
done yet (pods still being deleted) ends it, and the Etcd is reconciled again
after a stated delay (or on its next event), from a fresh observation.

Gates: disruptive steps run only with --allow-disruptive, at least
--min-disruptive-interval seconds apart (default 60; the time of the last one
is kept in status.lastOperation), and only when a fresh observation just
before still plans them. A membership change (a scale) waits until every
member that stays is Ready. The quorum-loss recovery (the StatefulSet scaled
to 0, re-bootstrapped from the backup) waits, with status.lastOperation.state
AwaitingApproval and its data-loss bound, until the Etcd is annotated
ruleplane.dev/approve-plan=<the plan's digest> (an approval needs no
--allow-disruptive), or always runs with --auto-recover-quorum-loss.
--dry-run plans everything, performs nothing, and records each request it
would send as an Event of reason DryRun. It takes no part in leader election
(whatever --leader-elect says): it writes nothing but Events, so it needs no
Lease, and holding one would keep the replicas that act from acting.

Leader election (on by default): replicas fill their caches, and the one
holding the coordination.k8s.io Lease (--leader-elect-resource-name, default
ruleplane-controller, in the kubeconfig's namespace; 15 s / 10 s / 2 s as
client-go) reconciles. It sends nothing once its last renewal is older than
the renew deadline (its own monotonic clock; so also right after a pause
longer than that), cancels the requests in flight and exits with 1 at once,
as controller-runtime does; on SIGTERM it finishes the reconciles in
progress and only then gives the Lease up.

Sharding, for more Etcds than one replica should carry: with --shard I/N
(0 <= I < N) a replica reconciles only the Etcds whose "namespace/name" has
an FNV-1a 64-bit hash equal to I mod N, and elects through the Lease
<resource-name>-shard-I-of-N, so that one replica of each shard leads it; run
one Deployment per shard. --selector takes only the Etcds with these labels
(LABEL=VALUE, comma-separated; all must match), filtered by the API server.

Serves /metrics (Prometheus), /healthz and /readyz (ready once the cache has
listed everything) on --metrics-bind-address (default 0.0.0.0:8080).
)";

std::atomic<bool> controller_stopping{false};  // lock-free: set from the signal handler

}  // namespace

int RunController(const Args& args, std::ostream& out, std::ostream& err) {
  if (HelpRequested(args)) return PrintUsage(kControllerUsage, out);
  Flags flags({{"--kubeconfig"},
               {"--context"},
               {"-n"},
               {"--all-namespaces", false},
               {"--rules"},
               {"--param"},
               {"--journal"},
               {"--dry-run", false},
               {"--allow-disruptive", false},
               {"--auto-recover-quorum-loss", false},
               {"--min-disruptive-interval"},
               {"--resync-period"},
               {"--metrics-bind-address"},
               {"--leader-elect"},
               {"--leader-elect-lease-duration"},
               {"--leader-elect-renew-deadline"},
               {"--leader-elect-retry-period"},
               {"--leader-elect-resource-name"},
               {"--leader-elect-resource-namespace"},
               {"--shard"},
               {"--selector"},
               {"--workers"}});
  if (!flags.Parse(args, err, kControllerUsage)) return kExitUsage;
  int64_t resync_seconds = 30, lease_seconds = 15, renew_seconds = 10, retry_seconds = 2,
          interval_seconds = 60, worker_count = 2;
  if (!flags.GetCount("--workers", worker_count, err) ||
      !flags.GetCount("--resync-period", resync_seconds, err) ||
      !flags.GetCount("--min-disruptive-interval", interval_seconds, err) ||
      !flags.GetCount("--leader-elect-lease-duration", lease_seconds, err) ||
      !flags.GetCount("--leader-elect-renew-deadline", renew_seconds, err) ||
      !flags.GetCount("--leader-elect-retry-period", retry_seconds, err)) {
    return kExitUsage;
  }
  if (worker_count < 1 || worker_count > 64) {
    err << "ruleplane: controller: --workers is between 1 and 64\n";
    return kExitUsage;
  }
  const std::string leader_elect = flags.Get("--leader-elect", "true");
  if (leader_elect != "true" && leader_elect != "false") {
    err << "ruleplane: controller: --leader-elect is true or false\n";
    return kExitUsage;
  }
  std::optional<ControllerShard> shard;
  if (flags.Has("--shard")) {
    auto parsed = ControllerShard::Parse(flags.Get("--shard"));
    if (!parsed.ok()) {
      err << "ruleplane: controller: " << parsed.error().message << "\n";
      return kExitUsage;
    }
    shard = *parsed;
  }
  const std::string etcd_selector = flags.Get("--selector");
  if (!IsEqualitySelector(etcd_selector)) {
    err << "ruleplane: controller: --selector is LABEL=VALUE[,LABEL=VALUE...], not \"" << etcd_selector
        << "\"\n";
    return kExitUsage;
  }
  auto config = ResolveKubeConfig(flags.Get("--kubeconfig"), flags.Get("--context"));
  if (!config.ok()) {
    err << "ruleplane: controller: " << config.error().message << "\n";
    return kExitUsage;
  }
  const std::string namespace_name =
      flags.Has("--all-namespaces") ? "" : flags.Get("-n", config->namespace_name);

  std::vector<std::string> references = flags.GetList("--rules");
  const bool rules_given = !references.empty();
  if (!rules_given) references = DefaultRuleReferences();
  auto library = LoadRuleLibrary(references, err);
  if (!library || PrintDiagnostics(*library, err) > 0) return kExitUsage;
  ParamOverrides overrides;
  for (const std::string& param : flags.GetList("--param")) {
    if (!ParseParamOption(param, overrides, err)) return kExitUsage;
  }
  if (!OverridesAreDeclared(*library, overrides, err)) return kExitUsage;
  ManagerOptions options;
  options.kube = *config;
  options.namespace_name = namespace_name;
  options.etcd_selector = etcd_selector;
  options.shard = shard;
  options.rule_sets = SelectForSubject(*library, "EtcdCluster", err);
  options.reconciler.member_init_rules = MemberInitReferences(*library, rules_given);
  options.catalogue = library->catalogue.get();
  options.journal_path = flags.Get("--journal", "ruleplane-controller-journal.db");
  options.workers = worker_count;
  options.reconciler.dry_run = flags.Has("--dry-run");
  options.reconciler.allow_disruptive = flags.Has("--allow-disruptive");
  options.reconciler.auto_recover_quorum_loss = flags.Has("--auto-recover-quorum-loss");
  options.reconciler.min_disruptive_interval = std::chrono::seconds(interval_seconds);
  options.reconciler.evaluation.param_overrides = overrides;
  options.resync_period = std::chrono::seconds(resync_seconds);
  options.metrics_bind_address = flags.Get("--metrics-bind-address", "0.0.0.0:8080");
  // A dry run never holds the Lease: it would keep the replicas that act from acting.
  options.leader_elect = leader_elect == "true" && !flags.Has("--dry-run");
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  options.election.namespace_name = flags.Get("--leader-elect-resource-namespace", config->namespace_name);
  options.election.lease_name = flags.Get("--leader-elect-resource-name", "ruleplane-controller");
  options.election.identity = std::string(host) + "_" + std::to_string(getpid());
  options.election.lease_duration = std::chrono::seconds(lease_seconds);
  options.election.renew_deadline = std::chrono::seconds(renew_seconds);
  options.election.retry_period = std::chrono::seconds(retry_seconds);

  std::signal(SIGTERM, [](int) { controller_stopping = true; });
  std::signal(SIGINT, [](int) { controller_stopping = true; });
  if (Status ran = RunManager(options, controller_stopping, out); !ran.ok()) {
    err << "ruleplane: controller: " << ran.error().message << "\n";
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace ruleplane::cli
