// EtcdReconciler: one reconcile of one Etcd object, as `ruleplane
// controller` runs it for each key its work queue hands out. Level-based: it
// reads the whole current state from the watch cache (never the event that
// queued it), plans with the loaded rule sets, executes the plan through the
// Kubernetes adapter with at most one disruptive step performed (the plan
// pauses before a second, which is planned again from the state the first
// leaves) and the gates of controller_gates.h, journals every step, writes
// one JSON line per step to `log` and an Event per step performed (in a dry
// run, one of reason DryRun per request it would send), and keeps
// status.lastOperation / lastErrors (last_operation.h). Before a disruptive
// step acts, the state is observed again from the API server and planned
// again: the step runs only if the fresh plan still has it and its gates
// still pass; then, before it acts, the intent (lastDisruptiveStepTime and
// the step) is written to the status, fenced, so that a crash right after the
// step keeps the minimum interval for whoever comes next. A steady state (nothing to do, the status saying
// so) costs no request.
//
// A reconcile never waits for the world: a step that is not done yet (pods
// still being deleted) ends it, and the result says when to reconcile the
// Etcd again; the next reconcile observes again and goes on from there.
// Several workers may each hold a reconciler of their own (its own client and
// journal connection) over one cache; the log lines of each are whole.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "adapters/kubernetes/kube_client.h"
#include "adapters/kubernetes/member_endpoints.h"
#include "adapters/kubernetes/object_cache.h"
#include "controller/controller_gates.h"
#include "controller/controller_metrics.h"
#include "controller/observed_times.h"
#include "controller/reconcile_workers.h"
#include "engine/match/compiled_rule_set.h"
#include "engine/rule_file/action_catalogue.h"
#include "execution/executor.h"
#include "execution/journal.h"

namespace ruleplane {

struct ReconcilerOptions {
  bool dry_run = false;           // plan everything, send no write
  bool allow_disruptive = false;  // else a disruptive step is refused (and with it the plan)
  // Else a plan that scales the StatefulSet to 0 (DEP-01's quorum-loss
  // re-bootstrap from the backup) is refused even with allow_disruptive.
  bool auto_recover_quorum_loss = false;
  std::chrono::seconds min_disruptive_interval{60};
  EvaluationOptions evaluation;  // --param overrides (e.g. the status rules' grace periods)
  // A step's transient failures are retried in place only briefly; beyond
  // that the reconcile fails and the work queue's backoff takes over.
  RetryPolicy retry{std::chrono::milliseconds(200), std::chrono::seconds(2), std::chrono::seconds(5)};
  // True once the reconciler may no longer act (the leadership is lost):
  // the plan stops between steps and retries.
  std::function<bool()> cancelled;
  // What the StatefulSet gives member-init as --rules (MemberInitRules).
  std::vector<std::string> member_init_rules;
  // When the member Leases were seen renewed and the last disruptive step
  // written (shared by the copies of these options).
  std::shared_ptr<ObservedTimes> observed_times = std::make_shared<ObservedTimes>();
};

class EtcdReconciler {
 public:
  EtcdReconciler(const ObjectCache& cache, KubeClient& client,
                 std::vector<std::shared_ptr<const CompiledRuleSet>> rule_sets,
                 const ActionCatalogue* catalogue, Journal* journal, ReconcilerOptions options,
                 ControllerMetrics& metrics, std::ostream& log);

  // `key`: "namespace/name". kNotFound when the Etcd is gone (nothing to do);
  // an error of the plan or of a step otherwise (requeue with backoff); when
  // the plan paused before a step that waits for the world, requeue_after.
  Result<ReconcileResult> Reconcile(const std::string& key);

 private:
  // The re-check before a disruptive step (and the re-bootstrap marker):
  // kConflict when a fresh observation no longer plans it or a gate now
  // holds it back.
  Status Recheck(const std::string& namespace_name, const std::string& name, const PlanStep& step);
  // How to reach the members of the Etcd the snapshot holds.
  Result<MemberEndpoints> ResolveMembers(const Value& snapshot);
  // etcd's member list, fenced as the Kubernetes client is.
  EtcdMembership ReadMembership(const Result<MemberEndpoints>& members);
  // The observation with the member Leases' renewTime and the last
  // disruptive step's time as this controller saw them (ObservedTimes), and
  // with what the cache does not hold, read now where a rule set reads it:
  // the unbound claims' Warning Events, and the members' maintenance status
  // (resolving `members` to read it).
  Result<Snapshot> WithLiveReads(Result<Snapshot> observed, std::optional<Result<MemberEndpoints>>& members);
  // The Event of a step that ended: performed, failed, waiting for an
  // approval, or in a dry run each request it would send.
  void RecordEvent(const Value& etcd, const PlanStep& planned, const std::string& digest,
                   const StepReport& step, Timestamp now);
  // `field` ("status", "metadata") of the Etcd patched with what
  // `content_of` computes from an Etcd (null: nothing to write): computed
  // first from the cache's Etcd and, when that asks for a write, again from
  // the Etcd as the API server has it now, then written fenced on its
  // resourceVersion. The cache may lag behind a write of this or another run
  // (the intent of a disruptive step): what is written never rolls it back.
  Status PatchFromLive(const std::string& namespace_name, const std::string& name, const std::string& field,
                       const Value& cached, const std::function<Value(const Value& etcd)>& content_of);
  ControllerGateOptions GateOptions() const;

  const ObjectCache& cache_;
  KubeClient& client_;
  std::vector<std::shared_ptr<const CompiledRuleSet>> rule_sets_;
  const ActionCatalogue* catalogue_;
  Journal* journal_;
  ReconcilerOptions options_;
  ControllerMetrics& metrics_;
  std::ostream& log_;
  const bool reads_maintenance_;     // a rule set reads maintenanceStatus
  const bool reads_claim_warnings_;  // a rule set reads unboundClaimWarnings
};

}  // namespace ruleplane
