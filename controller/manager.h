// The controller's manager loop, as controller-runtime's manager: a watch
// cache of the Etcds and the objects they own, a work queue fed by its events
// and by a periodic resync, reconcile workers, leader election (only the
// Lease holder reconciles, and a replica that loses it exits at once), and the
// /metrics, /healthz and /readyz endpoints. `ruleplane controller` parses its
// flags into ManagerOptions and calls RunManager.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/kubernetes/kube_config.h"
#include "adapters/kubernetes/leader_election.h"
#include "adapters/kubernetes/object_cache.h"
#include "controller/controller_shard.h"
#include "controller/etcd_reconciler.h"
#include "engine/match/compiled_rule_set.h"
#include "engine/rule_file/action_catalogue.h"

namespace ruleplane {

struct ManagerOptions {
  KubeConfig kube;
  std::string namespace_name;  // "" = every namespace
  std::string etcd_selector;   // LABEL=VALUE[,...], filtered by the API server; "" = every Etcd
  std::optional<ControllerShard> shard;
  std::vector<std::shared_ptr<const CompiledRuleSet>> rule_sets;
  const ActionCatalogue* catalogue = nullptr;
  std::string journal_path;
  int64_t workers = 2;
  ReconcilerOptions reconciler;
  std::chrono::seconds resync_period{30};
  std::string metrics_bind_address = "0.0.0.0:8080";
  // Off in a dry run: it writes nothing but Events, and holding the Lease
  // would keep the replicas that act from acting.
  bool leader_elect = true;
  LeaderElectionConfig election;  // identity, durations; the Lease's name before sharding
};

// "" or LABEL=VALUE terms separated by commas: what an Etcd selector may be
// (the API server would answer anything else with 400 on every list).
bool IsEqualitySelector(std::string_view selector);

// What the controller's cache follows in `namespace_name` ("" = all): the
// Etcds `etcd_selector` selects and everything of theirs the rules observe
// (PodDisruptionBudgets as policy/v1 when the API server serves it).
std::vector<CachedKind> WatchedKinds(const std::string& namespace_name, const std::string& etcd_selector,
                                     bool policy_v1);

// Runs until `stop` is set (SIGTERM): finishes the reconciles in progress,
// then gives the Lease up. Logs one JSON line per event to `log`. An error
// before it starts (a journal that cannot be opened, the metrics address in
// use). A replica that loses its Lease exits the process with 1 without a
// graceful shutdown, as controller-runtime does.
Status RunManager(const ManagerOptions& options, const std::atomic<bool>& stop, std::ostream& log);

}  // namespace ruleplane
