// EtcdReconciler: one reconcile of one Etcd object, as `ruleplane
// controller` runs it for each key its work queue hands out. Level-based: it
// reads the whole current state from the watch cache (never the event that
// queued it), plans with the loaded rule sets, executes the plan through the
// Kubernetes adapter with at most one disruptive step performed (the plan
// pauses before a second, which is planned again from the state the first
// leaves), journals every step, and writes one JSON line per step to `log`.
// A plan with no steps costs no request.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "actions/controller_metrics.h"
#include "actions/executor.h"
#include "actions/journal.h"
#include "adapters/kubernetes/kube_client.h"
#include "adapters/kubernetes/object_cache.h"
#include "engine/match/compiled_rule_set.h"
#include "engine/rule_file/action_catalogue.h"

namespace ruleplane {

struct ReconcilerOptions {
  bool dry_run = false;           // plan everything, send no write
  bool allow_disruptive = false;  // else a disruptive step is refused (and with it the plan)
  // Else a plan that scales the StatefulSet to 0 (DEP-01's quorum-loss
  // re-bootstrap from the backup) is refused even with allow_disruptive.
  bool auto_recover_quorum_loss = false;
};

class EtcdReconciler {
 public:
  EtcdReconciler(const ObjectCache& cache, KubeClient& client,
                 std::vector<std::shared_ptr<const CompiledRuleSet>> rule_sets,
                 const ActionCatalogue* catalogue, Journal* journal, ReconcilerOptions options,
                 ControllerMetrics& metrics, std::ostream& log);

  // `key`: "namespace/name". kNotFound when the Etcd is gone (nothing to do);
  // an error of the plan or of a step otherwise (requeue with backoff).
  Status Reconcile(const std::string& key);

 private:
  const ObjectCache& cache_;
  KubeClient& client_;
  std::vector<std::shared_ptr<const CompiledRuleSet>> rule_sets_;
  const ActionCatalogue* catalogue_;
  Journal* journal_;
  ReconcilerOptions options_;
  ControllerMetrics& metrics_;
  std::ostream& log_;
};

}  // namespace ruleplane
