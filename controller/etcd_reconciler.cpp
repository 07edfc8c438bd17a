#include "controller/etcd_reconciler.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>
#include <syncstream>

#include "adapters/kubernetes/etcd_event.h"
#include "controller/cluster_adapters.h"
#include "controller/last_operation.h"
#include "controller/stateful_set_status.h"
#include "engine/common/json_value.h"
#include "engine/common/sha256.h"
#include "engine/common/time_util.h"
#include "engine/expr/access_tree.h"
#include "engine/plan/plan.h"
#include "engine/plan/snapshot_projection.h"
#include "observers/cluster_observer.h"
#include "observers/data_volume_observer.h"
#include "observers/maintenance_observer.h"

namespace ruleplane {
namespace {

// A random (version 4) UUID naming one reconcile, as etcd-druid's runID does.
std::string NewRunId() {
  static thread_local std::mt19937_64 random(std::random_device{}());
  const uint64_t high = (random() & ~uint64_t{0xF000}) | 0x4000;
  const uint64_t low = (random() & ~(uint64_t{0xC} << 60)) | (uint64_t{0x8} << 60);
  char text[37];
  std::snprintf(text, sizeof text, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(high >> 32),
                static_cast<unsigned>((high >> 16) & 0xFFFF), static_cast<unsigned>(high & 0xFFFF),
                static_cast<unsigned>(low >> 48), static_cast<unsigned long long>(low & 0xFFFFFFFFFFFFULL));
  return text;
}

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

bool ReadsSnapshotField(const std::vector<std::shared_ptr<const CompiledRuleSet>>& rule_sets,
                        const std::string& field) {
  return std::any_of(rule_sets.begin(), rule_sets.end(),
                     [&](const auto& compiled) { return SnapshotReads(*compiled)->fields.count(field) > 0; });
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
      log_(log),
      reads_maintenance_(ReadsSnapshotField(rule_sets_, "maintenanceStatus")),
      reads_claim_warnings_(ReadsSnapshotField(rule_sets_, "unboundClaimWarnings")) {}

ControllerGateOptions EtcdReconciler::GateOptions() const {
  return {options_.auto_recover_quorum_loss, options_.min_disruptive_interval};
}

Result<ReconcileResult> EtcdReconciler::Reconcile(const std::string& key) {
  const auto started = std::chrono::steady_clock::now();
  const size_t slash = key.find('/');
  const std::string namespace_name = key.substr(0, slash), name = key.substr(slash + 1);
  auto now = TimestampFromUnixSeconds(std::time(nullptr));
  if (!now.ok()) return now.error();
  const std::string run_id = NewRunId();
  std::optional<Result<MemberEndpoints>> members;
  auto snapshot = WithLiveReads(ObserveClusterFromCache(cache_, namespace_name, name, *now), members);
  if (!snapshot.ok()) return snapshot.error();
  const Value& etcd = *snapshot->document.Find("etcd");
  ControllerMetrics::ClusterState state = StateOf(etcd);

  auto plan = MakePlan(rule_sets_, *snapshot, options_.evaluation, catalogue_);
  if (!plan.ok()) return plan.error();
  if (!members && PlansMemberCalls(*plan)) members = ResolveMembers(snapshot->document);
  // A recovery shows what it loses: from the revisions of members etcd lists now.
  std::optional<EtcdMembership> membership;
  if (ShowsDataLossBound(*plan, etcd)) {
    if (!members) members = ResolveMembers(snapshot->document);
    membership = ReadMembership(*members);
  }
  // The compaction Job compacts only the history of the cluster a member
  // answers for now, up to its revision now (CompactionScope).
  CompactionScope compaction_scope;
  if (std::any_of(plan->steps.begin(), plan->steps.end(),
                  [](const PlanStep& step) { return step.action == "CreateCompactionJob"; })) {
    if (!members) members = ResolveMembers(snapshot->document);
    const EtcdMembership answered = membership ? *membership : ReadMembership(*members);
    compaction_scope = {answered.cluster_id, answered.revision};
  }
  ControllerGateOptions gate_options = GateOptions();
  gate_options.membership = membership ? &*membership : nullptr;
  const std::string digest = ApprovalDigest(*plan, etcd);
  ExecutionReport report;
  report.state = "succeeded";
  Value intent;  // written before a disruptive step acted, when one did
  // A rule set that could not decide is a refusal even with no step planned.
  if (!plan->steps.empty() || plan->has_error() || plan->has_violation()) {
    ClusterAdapters adapters(client_, *snapshot, members && members->ok() ? &**members : nullptr,
                             options_.member_init_rules);
    KubernetesAdapter& kubernetes = adapters.kubernetes();
    kubernetes.set_compaction_scope(compaction_scope);
    ExecutorOptions options;
    options.dry_run = options_.dry_run;
    options.allow_disruptive = options_.allow_disruptive;
    options.command = options_.dry_run ? "controller --dry-run" : "controller";
    options.subject = "etcd " + key;
    options.one_disruptive_step = true;
    options.retry = options_.retry;
    options.cancelled = options_.cancelled;
    options.gate = [&](const PlanStep& step) {
      return GateControllerStep(step, snapshot->document, digest, *now, gate_options);
    };
    // Right before a disruptive step acts: the state it was decided on still
    // holds, and the intent is on the status first (fenced as the plan's
    // other writes), so that a crash after the step keeps its time.
    // The re-bootstrap marker is not disruptive itself, but ordinal 0
    // re-creates the cluster from the backup on it: it rests on a fresh
    // observation too.
    options.recheck_also = [](const PlanStep& step) { return step.action == "MarkRebootstrap"; };
    options.recheck = [&](const PlanStep& step) -> Status {
      if (Status holds = Recheck(namespace_name, name, step); !holds.ok()) return holds;
      if (!step.disruptive) return {};
      auto at = TimestampFromUnixSeconds(std::time(nullptr));
      if (!at.ok()) return at.error();
      const Value fields = DisruptiveStepIntent(step, *plan, digest, *at);
      RequestLog log;
      if (Status written = kubernetes.PatchEtcdStatus(fields, log); !written.ok()) {
        Error error = written.error();
        error.message = "recording the intent on the status before acting: " + error.message;
        return error;
      }
      intent = fields;
      return {};
    };
    options.on_step = [&](const PlanStep& planned, const StepReport& step) {
      metrics_.Step(step.action, std::string(StepStateName(step.state)), planned.disruptive);
      std::osyncstream(log_) << FormatJson(Value::MakeMap({
                                    {Value::String("time"), Value::String(FormatRfc3339(*now))},
                                    {Value::String("etcd"), Value::String(key)},
                                    {Value::String("runID"), Value::String(run_id)},
                                    {Value::String("planDigest"), Value::String(digest)},
                                    {Value::String("snapshot"), Value::String(plan->snapshot_digest)},
                                    {Value::String("step"), Value::String(step.step_id)},
                                    {Value::String("action"), Value::String(step.action)},
                                    {Value::String("target"), Value::String(step.target)},
                                    {Value::String("state"),
                                     Value::String(std::string(StepStateName(step.state)))},
                                    {Value::String("message"), Value::String(step.message)},
                                }))
                             << std::endl;
      RecordEvent(etcd, planned, digest, step, *now);
    };
    Executor executor(adapters.set(), journal_, options);
    report = executor.Run(*plan, *snapshot, rule_sets_, options_.evaluation);
    if (report.state == "refused") {
      for (size_t i = 0; i < report.steps.size(); ++i) {
        if (report.steps[i].state == StepState::kRefused) options.on_step(plan->steps[i], report.steps[i]);
      }
    }
  }
  Status written;
  if (!options_.dry_run) {
    const DataLossBound bound = DataLossBoundOf(snapshot->document, gate_options.membership);
    written = PatchFromLive(namespace_name, name, "status", etcd, [&](const Value& of) {
      Value::Map fields;
      for (const Value& part : {LastOperationStatus(of, *plan, digest, report, bound, *now, intent, run_id),
                                StatefulSetStatus(of, snapshot->document.Find("statefulSet"))}) {
        if (part.is_map()) fields.insert(fields.end(), part.map_value().begin(), part.map_value().end());
      }
      return fields.empty() ? Value() : Value::MakeMap(std::move(fields));
    });
    // A recovery that has completed leaves no approval or marker behind.
    if (report.ok() && written.ok()) {
      written = PatchFromLive(namespace_name, name, "metadata", etcd, [](const Value& of) {
        const Value retired = RetiredRecoveryAnnotations(of);
        return retired.is_null() ? retired : Value::MakeMap({{Value::String("annotations"), retired}});
      });
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!report.ok() || !written.ok()) {
    const Error& error = report.ok() ? written.error() : *report.error;
    metrics_.Reconciled(error.code == ErrorCode::kConflict  ? "conflict"
                        : error.code == ErrorCode::kRefused ? "refused"
                                                            : "error",
                        seconds);
    metrics_.Cluster(key, state);
    return error;
  }
  metrics_.Reconciled(report.state == "paused" ? "paused" : "success", seconds);
  state.last_success = static_cast<double>(std::time(nullptr));
  metrics_.Cluster(key, state);
  return ReconcileResult{report.requeue_after};
}

EtcdMembership EtcdReconciler::ReadMembership(const Result<MemberEndpoints>& members) {
  if (!members.ok())
    return EtcdMembership{.unavailable = "the members' endpoints: " + members.error().message};
  EtcdClient client(members->config);
  client.set_guard(client_.guard());
  client.set_cancel(client_.cancel());
  RequestLog reads;
  return ReadEtcdMembership(client, reads);
}

Result<MemberEndpoints> EtcdReconciler::ResolveMembers(const Value& snapshot) {
  RequestLog reads;
  return ResolveMemberEndpoints(snapshot, client_, reads, kMemberCallTimeout);
}

Result<Snapshot> EtcdReconciler::WithLiveReads(Result<Snapshot> observed,
                                               std::optional<Result<MemberEndpoints>>& members) {
  if (observed.ok())
    observed = options_.observed_times->Observed(*observed, std::chrono::steady_clock::now());
  if (observed.ok() && reads_claim_warnings_) {
    RequestLog reads;
    observed = WithUnboundClaimWarnings(*observed, client_, reads);
  }
  if (!observed.ok() || !reads_maintenance_) return observed;
  members = ResolveMembers(observed->document);
  return WithMaintenanceStatus(*observed, *members);
}

Status EtcdReconciler::Recheck(const std::string& namespace_name, const std::string& name,
                               const PlanStep& step) {
  auto now = TimestampFromUnixSeconds(std::time(nullptr));
  if (!now.ok()) return now.error();
  RequestLog reads;
  std::optional<Result<MemberEndpoints>> members;
  auto fresh = WithLiveReads(ObserveCluster(client_, namespace_name, name, *now, reads), members);
  if (!fresh.ok()) return fresh.error();
  auto replanned = MakePlan(rule_sets_, *fresh, options_.evaluation, catalogue_);
  if (!replanned.ok()) return replanned.error();
  const auto same =
      std::find_if(replanned->steps.begin(), replanned->steps.end(),
                   [&](const PlanStep& planned) { return planned.idempotency_key == step.idempotency_key; });
  if (same == replanned->steps.end()) {
    return Error{ErrorCode::kConflict,
                 "re-checked before acting: the state it was decided on no longer holds (a fresh observation "
                 "does not plan it)",
                 {}};
  }
  const GateDecision gate = GateControllerStep(
      *same, fresh->document, ApprovalDigest(*replanned, *fresh->document.Find("etcd")), *now, GateOptions());
  if (gate.wait || gate.refuse) {
    return Error{ErrorCode::kConflict, "re-checked before acting: " + gate.reason, {}};
  }
  return {};
}

void EtcdReconciler::RecordEvent(const Value& etcd, const PlanStep& planned, const std::string& digest,
                                 const StepReport& step, Timestamp now) {
  const std::string name = ValueAt(etcd, {"metadata", "name"})->string_value();
  const std::string namespace_name = ValueAt(etcd, {"metadata", "namespace"})->string_value();
  const std::string about =
      step.action + " " + step.target + " (step " + step.step_id + ", plan " + digest + ")";
  std::vector<EtcdEventFields> events;
  if (options_.dry_run) {
    // One Event per distinct request: every resync plans the same again.
    for (const Request& request : step.requests) {
      if (!request.mutates) continue;
      const std::string text = DescribeRequest(request);
      events.push_back({name + ".dryrun." + Sha256Hex(text).substr(0, 16), "Normal", "DryRun",
                        "would send " + text + " for " + about, step.action});
    }
  } else if (step.state == StepState::kSucceeded) {
    events.push_back({"", "Normal", step.action, "done: " + about, step.action});
  } else if (step.state == StepState::kFailed) {
    events.push_back({"", "Warning", "StepFailed", step.message + ": " + about, step.action});
  } else if (step.state == StepState::kPending && IsQuorumLossRecovery(planned, etcd) &&
             step.message.rfind("waiting: ", 0) == 0) {
    // One per plan digest: it waits for an approval of this very plan.
    events.push_back({name + ".approval." + digest.substr(7, 16), "Warning", "ApprovalRequired", step.message,
                      step.action});
  }
  for (const EtcdEventFields& fields : events) {
    RequestLog log;
    auto created =
        client_.Create({"v1", "events", namespace_name, "", ""}, EtcdEvent(etcd, fields, now), log);
    // kConflict: an Event of that name exists already.
    if (!created.ok() && created.error().code != ErrorCode::kConflict) {
      std::osyncstream(log_) << FormatJson(Value::MakeMap(
                                    {{Value::String("etcd"), Value::String(namespace_name + "/" + name)},
                                     {Value::String("event"), Value::String(fields.reason)},
                                     {Value::String("error"), Value::String(created.error().message)}}))
                             << std::endl;
    }
  }
}

Status EtcdReconciler::PatchFromLive(const std::string& namespace_name, const std::string& name,
                                     const std::string& field, const Value& cached,
                                     const std::function<Value(const Value& etcd)>& content_of) {
  if (content_of(cached).is_null()) return {};  // a steady state costs no request
  const KubeResource etcd{"druid.gardener.cloud/v1alpha1", "etcds", namespace_name, name, ""};
  KubeResource patched_resource = etcd;
  if (field == "status") patched_resource.subresource = "status";
  Status written;
  // A conflict is a write by a step or a member agent in between: read again (at most three times).
  for (int attempt = 0; attempt < 3; ++attempt) {
    RequestLog log;
    auto current = client_.Get(etcd, log);
    if (!current.ok()) return current.error();
    const Value content = content_of(*current);
    if (content.is_null()) return {};
    auto patched = client_.MergePatch(patched_resource,
                                      FencedMergePatch(ResourceVersionOf(*current), field, content), log);
    if (patched.ok()) return {};
    written = patched.error();
    if (written.error().code != ErrorCode::kConflict) break;
  }
  return written;
}

}  // namespace ruleplane
