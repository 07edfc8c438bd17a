#include "controller/manager.h"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <optional>
#include <syncstream>
#include <thread>

#include "adapters/kubernetes/object_cache.h"
#include "controller/controller_metrics.h"
#include "controller/reconcile_workers.h"
#include "controller/work_queue.h"
#include "engine/common/json_value.h"
#include "execution/journal.h"
#include "platform/http_server.h"

namespace ruleplane {
namespace {

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

void LogLine(std::ostream& log, Value::Map fields) {
  std::osyncstream(log) << FormatJson(Value::MakeMap(std::move(fields))) << std::endl;
}

}  // namespace

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

std::vector<CachedKind> WatchedKinds(const std::string& namespace_name, const std::string& etcd_selector,
                                     bool policy_v1) {
  return {{{"druid.gardener.cloud/v1alpha1", "etcds", namespace_name, "", ""}, etcd_selector},
          {{"apps/v1", "statefulsets", namespace_name, "", ""}, ""},
          {{"coordination.k8s.io/v1", "leases", namespace_name, "", ""}, ""},
          {{"v1", "pods", namespace_name, "", ""}, ""},
          {{"v1", "persistentvolumeclaims", namespace_name, "", ""}, ""},
          {{policy_v1 ? "policy/v1" : "policy/v1beta1", "poddisruptionbudgets", namespace_name, "", ""}, ""},
          {{"batch/v1", "jobs", namespace_name, "", ""}, ""}};
}

Status RunManager(const ManagerOptions& options, const std::atomic<bool>& stop, std::ostream& log) {
  const std::string& namespace_name = options.namespace_name;
  auto owns = [&](const std::string& key) { return !options.shard || options.shard->Owns(key); };
  // One connection per worker (SQLite serialises the writers).
  std::vector<std::unique_ptr<Journal>> journals;
  for (int64_t i = 0; i < options.workers; ++i) {
    auto journal = Journal::Open(options.journal_path);
    if (!journal.ok()) return journal.error();
    journals.push_back(std::move(*journal));
  }

  KubeClient client(options.kube);
  WorkQueue queue;
  ControllerMetrics metrics;
  // The cache is made once discovery has answered (below); until then the
  // endpoints answer without it (not ready).
  std::optional<ObjectCache> cache;
  std::atomic<bool> cache_made = false;
  // A reader gone from a socket or from the log fails that write (EPIPE)
  // instead of killing the leader.
  std::signal(SIGPIPE, SIG_IGN);
  auto server = HttpServer::Start(options.metrics_bind_address, [&](const std::string& path) {
    const bool made = cache_made.load();
    if (path == "/metrics") {
      if (made) {
        const ObjectCache::Counters counters = cache->counters();
        metrics.SetApiRequests(counters.lists, counters.watches, counters.events);
      }
      metrics.SetQueueDepth(static_cast<int64_t>(queue.Depth()));
      return HttpAnswer{200, "text/plain; version=0.0.4; charset=utf-8", metrics.Text()};
    }
    if (path == "/healthz") return HttpAnswer{200, "text/plain", "ok\n"};
    if (path == "/readyz") {
      return made && cache->synced()
                 ? HttpAnswer{200, "text/plain", "ok\n"}
                 : HttpAnswer{503, "text/plain", "the cache has not listed everything yet\n"};
    }
    return HttpAnswer{404, "text/plain", "not found\n"};
  });
  if (!server.ok()) return server.error();

  // Kubernetes serves PodDisruptionBudgets as policy/v1 from 1.21 on, before
  // as policy/v1beta1 (removed in 1.25): asked of discovery, which the
  // namespaced Role does not restrict (a list across namespaces would be
  // refused), again every second until the API server answers.
  Result<bool> policy_v1 = false;
  for (bool first = true;; first = false) {
    RequestLog probe;
    policy_v1 = client.Serves("policy/v1", "poddisruptionbudgets", probe);
    if (policy_v1.ok()) break;
    if (first) {
      LogLine(log, {{Value::String("msg"), Value::String("waiting for the API server's discovery")},
                    {Value::String("error"), Value::String(policy_v1.error().message)}});
    }
    for (int tick = 0; tick < 10 && !stop; ++tick)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (stop) return {};
  }
  cache.emplace(options.kube, WatchedKinds(namespace_name, options.etcd_selector, *policy_v1),
                [&](const std::string& plural, const Value& object) {
                  const std::string key = EtcdKeyOf(plural, object);
                  if (!key.empty() && owns(key)) queue.Add(key);
                });
  cache_made = true;

  // Leader election: the cache fills on every replica; only the one holding
  // the Lease reconciles. The Lease is not a fence: every write still carries
  // the resourceVersion it observed.
  const bool elect = options.leader_elect;
  std::atomic<bool> leading{!elect}, workers_done{false}, lost{false}, finished{false};
  metrics.SetLeader(leading);
  LeaderElectionConfig election = options.election;
  if (options.shard) election.lease_name = options.shard->LeaseName(election.lease_name);
  // Each request ends well before the renew deadline.
  KubeClient election_client(options.kube, std::chrono::milliseconds(election.renew_deadline / 2));
  LeaderElector elector(election_client, election);
  // What the workers' clients ask before each request: nothing goes out
  // unless the lease was renewed within the renew deadline.
  auto may_act = [&]() -> Status {
    if (!elect || elector.HoldsLease()) return {};
    return Error{ErrorCode::kFailedPrecondition,
                 "not sent: this replica does not hold the lease " + election.namespace_name + "/" +
                     election.lease_name + " (not renewed within " +
                     std::to_string(
                         std::chrono::duration_cast<std::chrono::seconds>(election.renew_deadline).count()) +
                     " s)",
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
        LogLine(log, {{Value::String("msg"), Value::String("stopped leading")},
                      {Value::String("error"), Value::String(ended.error().message)}});
        log.flush();
        // As controller-runtime: a replica that lost its lease ends at once,
        // without a graceful shutdown (which would go on acting).
        std::_Exit(1);
      }
    });
  }
  cache->Start();
  ReconcilerOptions reconciler_options = options.reconciler;
  reconciler_options.cancelled = [&] { return !may_act().ok(); };
  // Each worker has its own connection and journal handle over the shared cache.
  std::vector<std::unique_ptr<KubeClient>> clients;
  std::vector<std::unique_ptr<EtcdReconciler>> reconcilers;
  std::vector<ReconcileFunction> workers;
  for (int64_t i = 0; i < options.workers; ++i) {
    clients.push_back(std::make_unique<KubeClient>(options.kube));
    clients.back()->set_cancel(&lost);
    clients.back()->set_guard(may_act);
    reconcilers.push_back(std::make_unique<EtcdReconciler>(*cache, *clients.back(), options.rule_sets,
                                                           options.catalogue, journals[i].get(),
                                                           reconciler_options, metrics, log));
    workers.push_back([&, reconciler = reconcilers.back().get()](const std::string& key) {
      if (!cache->synced()) return Result<ReconcileResult>(ReconcileResult{std::chrono::seconds(1)});
      Result<ReconcileResult> outcome = reconciler->Reconcile(key);
      if (!outcome.ok() && outcome.error().code != ErrorCode::kNotFound) {
        LogLine(log, {{Value::String("etcd"), Value::String(key)},
                      {Value::String("error"), Value::String(outcome.error().message)},
                      {Value::String("retries"), Value::Int(queue.Failures(key) + 1)}});
      }
      return outcome;
    });
  }
  auto stopping = [&] { return stop.load() || finished.load(); };
  // Time moves decisions too (a lease expires without an event): queue every Etcd now and then.
  std::thread resync([&] {
    auto next = std::chrono::steady_clock::now();
    while (!stopping()) {
      if (std::chrono::steady_clock::now() >= next && cache->synced()) {
        for (const Value& etcd : cache->List("etcds", namespace_name)) {
          const std::string key = EtcdKeyOf("etcds", etcd);
          if (owns(key)) queue.Add(key);
        }
        next = std::chrono::steady_clock::now() + options.resync_period;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    queue.ShutDown();
  });
  LogLine(log, {{Value::String("msg"), Value::String("started")},
                {Value::String("namespace"), Value::String(namespace_name)},
                {Value::String("workers"), Value::Int(options.workers)},
                {Value::String("metricsPort"), Value::Int((*server)->port())}});
  while (!leading && !stopping()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (!stopping()) RunReconcileWorkers(queue, workers);
  finished = true;
  resync.join();
  workers_done = true;
  if (elect_thread.joinable()) elect_thread.join();
  cache->Stop();
  return {};
}

}  // namespace ruleplane
