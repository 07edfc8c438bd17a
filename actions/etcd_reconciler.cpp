#include "actions/etcd_reconciler.h"

#include <chrono>
#include <ctime>

#include "adapters/kubernetes/cluster_observer.h"
#include "adapters/kubernetes/kubernetes_adapter.h"
#include "engine/common/json_value.h"
#include "engine/common/time_util.h"
#include "engine/plan/plan.h"

namespace ruleplane {
namespace {

int64_t Int(const Value& object, std::initializer_list<std::string_view> keys) {
  const Value* value = ValueAt(object, keys);
  return value != nullptr && value->is_int() ? value->int_value() : 0;
}

// What /metrics says about the cluster, from its Etcd's spec and status.
ControllerMetrics::ClusterState StateOf(const Value& etcd) {
  ControllerMetrics::ClusterState state;
  state.desired = Int(etcd, {"spec", "replicas"});
  const Value* members = ValueAt(etcd, {"status", "members"});
  if (members != nullptr && members->is_list()) {
    for (const Value& member : members->list_value()) {
      const Value* status = ValueAt(member, {"status"});
      if (status != nullptr && status->is_string() && status->string_value() == "Ready") ++state.ready;
    }
  }
  const int64_t size = ValueAt(etcd, {"status", "clusterSize"}) != nullptr
                           ? Int(etcd, {"status", "clusterSize"})
                           : state.desired;
  state.quorate = size > 0 && 2 * state.ready > size;
  return state;
}

}  // namespace

EtcdReconciler::EtcdReconciler(const ObjectCache& cache, KubeClient& client,
                               std::vector<std::shared_ptr<const CompiledRuleSet>> rule_sets,
                               const ActionCatalogue* catalogue, Journal* journal, ReconcilerOptions options,
                               ControllerMetrics& metrics, std::ostream& log)
    : cache_(cache),
      client_(client),
      rule_sets_(std::move(rule_sets)),
      catalogue_(catalogue),
      journal_(journal),
      options_(options),
      metrics_(metrics),
      log_(log) {}

Status EtcdReconciler::Reconcile(const std::string& key) {
  const auto started = std::chrono::steady_clock::now();
  const size_t slash = key.find('/');
  const std::string namespace_name = key.substr(0, slash), name = key.substr(slash + 1);
  auto now = TimestampFromUnixSeconds(std::time(nullptr));
  if (!now.ok()) return now.error();
  auto snapshot = ObserveClusterFromCache(cache_, namespace_name, name, *now);
  if (!snapshot.ok()) return snapshot.error();
  ControllerMetrics::ClusterState state = StateOf(*snapshot->document.Find("etcd"));

  auto plan = MakePlan(rule_sets_, *snapshot, {}, catalogue_);
  if (!plan.ok()) return plan.error();
  ExecutionReport report;
  if (!plan->steps.empty()) {
    KubernetesAdapter kubernetes(client_, *snapshot);
    AdapterSet adapters;
    adapters.Add(&kubernetes);
    ExecutorOptions options;
    options.dry_run = options_.dry_run;
    options.allow_disruptive = options_.allow_disruptive;
    options.command = options_.dry_run ? "controller --dry-run" : "controller";
    options.subject = "etcd " + key;
    options.one_disruptive_step = true;
    if (!options_.auto_recover_quorum_loss) {
      options.gate = [](const PlanStep& step) {
        const Value* replicas = step.params.is_map() ? step.params.Find("replicas") : nullptr;
        GateDecision decision;
        if (step.action == "ScaleStatefulSet" && replicas != nullptr && replicas->is_int() &&
            replicas->int_value() == 0) {
          decision.refuse = true;
          decision.reason =
              "a scale to 0 re-bootstraps the cluster from its backup: only with --auto-recover-quorum-loss";
        }
        return decision;
      };
    }
    Executor executor(adapters, journal_, options);
    report = executor.Run(*plan, *snapshot, rule_sets_, {});
    for (const StepReport& step : report.steps) {
      bool disruptive = false;
      for (const PlanStep& planned : plan->steps)
        disruptive |= planned.id == step.step_id && planned.disruptive;
      metrics_.Step(step.action, std::string(StepStateName(step.state)), disruptive);
      log_ << FormatJson(Value::MakeMap({
                  {Value::String("time"), Value::String(FormatRfc3339(*now))},
                  {Value::String("etcd"), Value::String(key)},
                  {Value::String("plan"), Value::Int(report.plan_id)},
                  {Value::String("snapshot"), Value::String(plan->snapshot_digest)},
                  {Value::String("step"), Value::String(step.step_id)},
                  {Value::String("action"), Value::String(step.action)},
                  {Value::String("target"), Value::String(step.target)},
                  {Value::String("state"), Value::String(std::string(StepStateName(step.state)))},
                  {Value::String("message"), Value::String(step.message)},
              }))
           << std::endl;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!report.ok()) {
    metrics_.Reconciled(report.error->code == ErrorCode::kConflict  ? "conflict"
                        : report.error->code == ErrorCode::kRefused ? "refused"
                                                                    : "error",
                        seconds);
    metrics_.Cluster(key, state);
    return *report.error;
  }
  metrics_.Reconciled("success", seconds);
  state.last_success = static_cast<double>(std::time(nullptr));
  metrics_.Cluster(key, state);
  return {};
}

}  // namespace ruleplane
