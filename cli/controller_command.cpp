// ruleplane controller: reconciles every Etcd object of a namespace (or of
// all namespaces) from a watch cache, through a work queue, until stopped.
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string_view>
#include <syncstream>
#include <thread>
#include <vector>

#include "actions/controller_metrics.h"
#include "actions/controller_shard.h"
#include "actions/etcd_reconciler.h"
#include "actions/reconcile_workers.h"
#include "actions/work_queue.h"
#include "adapters/http_server.h"
#include "adapters/kubernetes/leader_election.h"
#include "adapters/kubernetes/object_cache.h"
#include "cli/cluster_input.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/param_option.h"
#include "cli/rule_library.h"
#include "engine/common/json_value.h"

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
queued Etcd observes it from the cache, plans with the etcd-druid rules,
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

std::atomic<bool> stopping{false};  // lock-free: set from the signal handler

std::string OwnerName(const Value& object, std::string_view kind) {
  const Value* metadata = object.is_map() ? object.Find("metadata") : nullptr;
  const Value* owners =
      metadata != nullptr && metadata->is_map() ? metadata->Find("ownerReferences") : nullptr;
  if (owners == nullptr || !owners->is_list()) return "";
  for (const Value& owner : owners->list_value()) {
    const Value* owner_kind = owner.is_map() ? owner.Find("kind") : nullptr;
    const Value* name = owner.is_map() ? owner.Find("name") : nullptr;
    if (owner_kind != nullptr && owner_kind->is_string() && owner_kind->string_value() == kind &&
        name != nullptr && name->is_string()) {
      return name->string_value();
    }
  }
  return "";
}

std::string MetadataText(const Value& object, std::string_view field) {
  const Value* metadata = object.is_map() ? object.Find("metadata") : nullptr;
  const Value* value = metadata != nullptr && metadata->is_map() ? metadata->Find(field) : nullptr;
  return value != nullptr && value->is_string() ? value->string_value() : "";
}

// The Etcd an object belongs to ("namespace/name"), or "".
std::string EtcdKeyOf(const std::string& plural, const Value& object) {
  std::string name;
  if (plural == "etcds") {
    name = MetadataText(object, "name");
  } else if (plural == "pods") {
    name = OwnerName(object, "StatefulSet");  // etcd-druid names the StatefulSet as its Etcd
  } else {
    name = OwnerName(object, "Etcd");
  }
  return name.empty() ? "" : MetadataText(object, "namespace") + "/" + name;
}

// "" or LABEL=VALUE terms separated by commas: what --selector accepts (the
// API server would answer anything else with 400 on every list, silently here).
bool IsEqualitySelector(std::string_view selector) {
  if (selector.empty()) return true;
  while (true) {
    const std::string_view term = selector.substr(0, selector.find(','));
    const size_t equals = term.find('=');
    if (equals == 0 || equals == std::string_view::npos ||
        term.find_first_of(" !") != std::string_view::npos ||
        term.find('=', equals + 1) != std::string_view::npos) {
      return false;
    }
    if (term.size() == selector.size()) return true;
    selector.remove_prefix(term.size() + 1);
  }
}

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
  ControllerShard shard;
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
  if (references.empty()) references = DefaultRuleReferences();
  auto library = LoadRuleLibrary(references, err);
  if (!library || PrintDiagnostics(*library, err) > 0) return kExitUsage;
  ParamOverrides overrides;
  for (const std::string& param : flags.GetList("--param")) {
    if (!ParseParamOption(param, overrides, err)) return kExitUsage;
  }
  if (!OverridesAreDeclared(*library, overrides, err)) return kExitUsage;
  auto rule_sets = SelectForSubject(*library, "EtcdCluster", err);
  // One connection per worker (SQLite serialises the writers).
  std::vector<std::unique_ptr<Journal>> journals;
  for (int64_t i = 0; i < worker_count; ++i) {
    auto journal = Journal::Open(flags.Get("--journal", "ruleplane-controller-journal.db"));
    if (!journal.ok()) {
      err << "ruleplane: controller: " << journal.error().message << "\n";
      return kExitUsage;
    }
    journals.push_back(std::move(*journal));
  }

  KubeClient client(*config);
  // Kubernetes serves PodDisruptionBudgets as policy/v1 from 1.21 on, before as policy/v1beta1.
  RequestLog probe;
  const bool policy_v1 = client.Get({"policy/v1", "poddisruptionbudgets", "", "", ""}, probe).ok();
  WorkQueue queue;
  ControllerMetrics metrics;
  ObjectCache cache(
      *config,
      {{{"druid.gardener.cloud/v1alpha1", "etcds", namespace_name, "", ""}, etcd_selector},
       {{"apps/v1", "statefulsets", namespace_name, "", ""}, ""},
       {{"coordination.k8s.io/v1", "leases", namespace_name, "", ""}, ""},
       {{"v1", "pods", namespace_name, "", ""}, ""},
       {{policy_v1 ? "policy/v1" : "policy/v1beta1", "poddisruptionbudgets", namespace_name, "", ""}, ""}},
      [&](const std::string& plural, const Value& object) {
        const std::string key = EtcdKeyOf(plural, object);
        if (!key.empty() && shard.Owns(key)) queue.Add(key);
      });
  // A reader gone from a socket or from stdout fails that write (EPIPE)
  // instead of killing the leader.
  std::signal(SIGPIPE, SIG_IGN);
  auto server =
      HttpServer::Start(flags.Get("--metrics-bind-address", "0.0.0.0:8080"), [&](const std::string& path) {
        if (path == "/metrics") {
          const ObjectCache::Counters counters = cache.counters();
          metrics.SetApiRequests(counters.lists, counters.watches, counters.events);
          metrics.SetQueueDepth(static_cast<int64_t>(queue.Depth()));
          return HttpAnswer{200, "text/plain; version=0.0.4; charset=utf-8", metrics.Text()};
        }
        if (path == "/healthz") return HttpAnswer{200, "text/plain", "ok\n"};
        if (path == "/readyz") {
          return cache.synced() ? HttpAnswer{200, "text/plain", "ok\n"}
                                : HttpAnswer{503, "text/plain", "the cache has not listed everything yet\n"};
        }
        return HttpAnswer{404, "text/plain", "not found\n"};
      });
  if (!server.ok()) {
    err << "ruleplane: controller: " << server.error().message << "\n";
    return kExitUsage;
  }
  std::signal(SIGTERM, [](int) { stopping = true; });
  std::signal(SIGINT, [](int) { stopping = true; });

  // Leader election: the cache fills on every replica; only the one holding
  // the Lease reconciles. The Lease is not a fence: every write still carries
  // the resourceVersion it observed.
  // A dry run never holds the Lease: it would keep the replicas that act from acting.
  const bool elect = leader_elect == "true" && !flags.Has("--dry-run");
  std::atomic<bool> leading{!elect}, workers_done{false}, lost{false};
  metrics.SetLeader(leading);
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  LeaderElectionConfig election;
  election.namespace_name = flags.Get("--leader-elect-resource-namespace", config->namespace_name);
  election.lease_name = flags.Get("--leader-elect-resource-name", "ruleplane-controller");
  if (flags.Has("--shard")) election.lease_name = shard.LeaseName(election.lease_name);
  election.identity = std::string(host) + "_" + std::to_string(getpid());
  election.lease_duration = std::chrono::seconds(lease_seconds);
  election.renew_deadline = std::chrono::seconds(renew_seconds);
  election.retry_period = std::chrono::seconds(retry_seconds);
  // Each request ends well before the renew deadline.
  KubeClient election_client(*config, std::chrono::milliseconds(election.renew_deadline / 2));
  LeaderElector elector(election_client, election);
  // What the workers' clients ask before each request: nothing goes out
  // unless the lease was renewed within the renew deadline.
  auto may_act = [&]() -> Status {
    if (!elect || elector.HoldsLease()) return {};
    return Error{ErrorCode::kFailedPrecondition,
                 "not sent: this replica does not hold the lease " + election.namespace_name + "/" +
                     election.lease_name + " (not renewed within " + std::to_string(renew_seconds) + " s)",
                 {}};
  };
  std::thread elect_thread;
  if (elect) {
    elect_thread = std::thread([&] {
      // Released only once the workers have stopped: no write after it.
      Status ended = elector.Run([&] { return workers_done.load(); },
                                 [&](bool now_leading) {
                                   leading = now_leading;
                                   metrics.SetLeader(now_leading);
                                 });
      if (!ended.ok()) {
        lost = true;  // the workers' requests in flight end now
        std::osyncstream(out) << FormatJson(Value::MakeMap(
                                     {{Value::String("msg"), Value::String("stopped leading")},
                                      {Value::String("error"), Value::String(ended.error().message)}}))
                              << std::endl;
        out.flush();
        // As controller-runtime: a replica that lost its lease ends at once,
        // without a graceful shutdown (which would go on acting).
        std::_Exit(kExitFinding);
      }
    });
  }
  cache.Start();
  ReconcilerOptions options;
  options.dry_run = flags.Has("--dry-run");
  options.allow_disruptive = flags.Has("--allow-disruptive");
  options.auto_recover_quorum_loss = flags.Has("--auto-recover-quorum-loss");
  options.min_disruptive_interval = std::chrono::seconds(interval_seconds);
  options.evaluation.param_overrides = overrides;
  options.cancelled = [&] { return !may_act().ok(); };
  // Each worker has its own connection and journal handle over the shared cache.
  std::vector<std::unique_ptr<KubeClient>> clients;
  std::vector<std::unique_ptr<EtcdReconciler>> reconcilers;
  std::vector<ReconcileFunction> workers;
  for (int64_t i = 0; i < worker_count; ++i) {
    clients.push_back(std::make_unique<KubeClient>(*config));
    clients.back()->set_cancel(&lost);
    clients.back()->set_guard(may_act);
    reconcilers.push_back(std::make_unique<EtcdReconciler>(cache, *clients.back(), rule_sets,
                                                           library->catalogue.get(), journals[i].get(),
                                                           options, metrics, out));
    workers.push_back([&, reconciler = reconcilers.back().get()](const std::string& key) {
      if (!cache.synced()) return Result<ReconcileResult>(ReconcileResult{std::chrono::seconds(1)});
      Result<ReconcileResult> outcome = reconciler->Reconcile(key);
      if (!outcome.ok() && outcome.error().code != ErrorCode::kNotFound) {
        std::osyncstream(out) << FormatJson(Value::MakeMap(
                                     {{Value::String("etcd"), Value::String(key)},
                                      {Value::String("error"), Value::String(outcome.error().message)},
                                      {Value::String("retries"), Value::Int(queue.Failures(key) + 1)}}))
                              << std::endl;
      }
      return outcome;
    });
  }
  // Time moves decisions too (a lease expires without an event): queue every Etcd now and then.
  std::thread resync([&] {
    auto next = std::chrono::steady_clock::now();
    while (!stopping) {
      if (std::chrono::steady_clock::now() >= next && cache.synced()) {
        for (const Value& etcd : cache.List("etcds", namespace_name)) {
          const std::string key = EtcdKeyOf("etcds", etcd);
          if (shard.Owns(key)) queue.Add(key);
        }
        next = std::chrono::steady_clock::now() + std::chrono::seconds(resync_seconds);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    queue.ShutDown();
  });
  std::osyncstream(out) << FormatJson(Value::MakeMap(
                               {{Value::String("msg"), Value::String("started")},
                                {Value::String("namespace"), Value::String(namespace_name)},
                                {Value::String("workers"), Value::Int(worker_count)},
                                {Value::String("metricsPort"), Value::Int((*server)->port())}}))
                        << std::endl;
  while (!leading && !stopping) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (!stopping) RunReconcileWorkers(queue, workers);
  stopping = true;
  resync.join();
  workers_done = true;
  if (elect_thread.joinable()) elect_thread.join();
  cache.Stop();
  return kExitOk;
}

}  // namespace ruleplane::cli
