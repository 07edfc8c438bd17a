#include "adapters/kubernetes/kubernetes_adapter.h"

#include <set>

#include <ctime>

#include "adapters/kubernetes/etcd_event.h"
#include "adapters/kubernetes/etcd_status.h"
#include "adapters/kubernetes/etcd_templates.h"
#include "engine/common/time_util.h"

namespace ruleplane {
namespace {

std::string Text(const Value& object, std::initializer_list<std::string_view> keys) {
  const Value* value = ValueAt(object, keys);
  return value != nullptr && value->is_string() ? value->string_value() : "";
}

int64_t Int(const Value& object, std::initializer_list<std::string_view> keys, int64_t fallback) {
  const Value* value = ValueAt(object, keys);
  return value != nullptr && value->is_int() ? value->int_value() : fallback;
}

const Value& StepValue(const PlanStep& step, std::string_view name) {
  static const Value kNull = Value::Null();
  const Value* value = step.params.is_map() ? step.params.Find(name) : nullptr;
  return value != nullptr ? *value : kNull;
}

int64_t IntParam(const PlanStep& step, std::string_view name) {
  const Value& value = StepValue(step, name);
  return value.is_int() ? value.int_value() : 0;
}

// `map` with `key` set to `value` (added at the end when absent).
Value With(const Value& map, const std::string& key, Value value) {
  Value::Map entries = map.is_map() ? map.map_value() : Value::Map{};
  for (auto& [name, item] : entries) {
    if (name.is_string() && name.string_value() == key) {
      item = std::move(value);
      return Value::MakeMap(std::move(entries));
    }
  }
  entries.emplace_back(Value::String(key), std::move(value));
  return Value::MakeMap(std::move(entries));
}

Value::List ListAt(const Value& object, std::initializer_list<std::string_view> keys) {
  const Value* list = ValueAt(object, keys);
  return list != nullptr && list->is_list() ? list->list_value() : Value::List{};
}

// The entry of `list` whose `key` field is `name`, or -1.
int IndexOf(const Value::List& list, const std::string& key, const std::string& name) {
  for (size_t i = 0; i < list.size(); ++i) {
    if (Text(list[i], {key}) == name) return static_cast<int>(i);
  }
  return -1;
}

// Whether every field the step gives is already on `entry` (string params only).
bool HasFields(const Value& entry, const PlanStep& step, std::initializer_list<std::string_view> fields) {
  for (std::string_view field : fields) {
    const Value& wanted = StepValue(step, field);
    if (wanted.is_null()) continue;
    const Value* have = ValueAt(entry, {field});
    if (have == nullptr || !(*have == wanted)) return false;
  }
  return true;
}

// The step's params named `fields` (those it gives) as a status entry, its
// key first. A step without lastTransitionTime gets the current time: the
// entry keeps its own while its status stays the same (WithStatusEntry), and
// a changed one needs the time of the change (the status rules time their
// grace periods from it).
Value StatusEntry(const PlanStep& step, const std::string& key, const std::string& name,
                  std::initializer_list<const char*> fields) {
  Value::Map entry{{Value::String(key), Value::String(name)}};
  for (const char* field : fields) {
    Value value = StepValue(step, field);
    if (value.is_null() && std::string_view(field) == "lastTransitionTime") {
      if (auto now = TimestampFromUnixSeconds(std::time(nullptr)); now.ok())
        value = Value::String(FormatRfc3339(*now));
    }
    entry.emplace_back(Value::String(field), std::move(value));
  }
  return Value::MakeMap(std::move(entry));
}

// The value of kRebootstrapAnnotation a MarkRebootstrap step writes: the
// backup revision and the approval the observed Etcd carries.
std::string RebootstrapMarker(const PlanStep& step, const Value& observed_etcd) {
  const std::string approval = Text(observed_etcd, {"metadata", "annotations", kApprovePlanAnnotation});
  return std::to_string(IntParam(step, "backupRevision")) + ":" + (approval.empty() ? "auto" : approval);
}

}  // namespace

KubernetesAdapter::KubernetesAdapter(KubeClient& client, const Snapshot& snapshot)
    : client_(client), snapshot_(snapshot.document) {
  namespace_ = Text(snapshot_, {"etcd", "metadata", "namespace"});
  etcd_name_ = Text(snapshot_, {"etcd", "metadata", "name"});
}

Value& KubernetesAdapter::Tracked(const std::string& key, const Value& observed) {
  auto found = tracked_.find(key);
  if (found == tracked_.end()) found = tracked_.emplace(key, observed).first;
  return found->second;
}

Result<Value> KubernetesAdapter::FreshEtcd(RequestLog& log) {
  return client_.Get({"druid.gardener.cloud/v1alpha1", "etcds", namespace_, etcd_name_, ""}, log);
}

Status KubernetesAdapter::PatchEtcdStatus(const Value& status_patch, RequestLog& log) {
  Value& etcd = Tracked("etcd", *ValueAt(snapshot_, {"etcd"}));
  auto patched = client_.MergePatch(
      {"druid.gardener.cloud/v1alpha1", "etcds", namespace_, etcd_name_, "status"},
      FencedMergePatch(Text(etcd, {"metadata", "resourceVersion"}), "status", status_patch), log);
  if (!patched.ok()) return patched.error();
  if (!patched->is_null()) etcd = *patched;
  return {};
}

Result<bool> KubernetesAdapter::Exists(const KubeResource& resource, RequestLog& log) {
  auto object = client_.Get(resource, log);
  if (!object.ok() && object.error().code != ErrorCode::kNotFound) return object.error();
  return object.ok();
}

Status KubernetesAdapter::CreateUnlessPresent(const KubeResource& collection, const Value& object,
                                              RequestLog& log) {
  auto created = client_.Create(collection, object, log);
  // 409 AlreadyExists: created before (by an earlier run of this step) or by someone else; IsDone decides.
  if (!created.ok() && created.error().code != ErrorCode::kConflict) return created.error();
  return {};
}

Result<bool> KubernetesAdapter::PodGone(const std::string& name, RequestLog& log) {
  auto pod = client_.Get({"v1", "pods", namespace_, name, ""}, log);
  if (!pod.ok()) {
    if (pod.error().code == ErrorCode::kNotFound) return true;
    return pod.error();
  }
  std::string observed_uid;
  for (const Value& observed : ListAt(snapshot_, {"pods"})) {
    if (Text(observed, {"metadata", "name"}) == name) observed_uid = Text(observed, {"metadata", "uid"});
  }
  // Replaced by the StatefulSet controller (a new uid), or on its way out.
  return (!observed_uid.empty() && Text(*pod, {"metadata", "uid"}) != observed_uid) ||
         ValueAt(*pod, {"metadata", "deletionTimestamp"}) != nullptr;
}

Result<bool> KubernetesAdapter::EventRecorded(const std::string& reason, const std::string& message,
                                              RequestLog& log) {
  auto events =
      client_.List({"v1", "events", namespace_, "", ""}, "", log,
                   "involvedObject.name=" + etcd_name_ + ",involvedObject.kind=Etcd,reason=" + reason);
  if (!events.ok()) return events.error();
  auto hour_ago = TimestampFromUnixSeconds(std::time(nullptr) - 3600);
  if (!hour_ago.ok()) return hour_ago.error();
  for (const Value& event : ListAt(*events, {"items"})) {
    auto last = ParseRfc3339(Text(event, {"lastTimestamp"}));
    if (Text(event, {"message"}) == message && last.ok() && last->seconds >= hour_ago->seconds) return true;
  }
  return false;
}

Status KubernetesAdapter::RecordEvent(const PlanStep& step, const std::string& type,
                                      const std::string& reason, const std::string& message,
                                      RequestLog& log) {
  auto now = TimestampFromUnixSeconds(std::time(nullptr));
  if (!now.ok()) return now.error();
  const Value event =
      EtcdEvent(*ValueAt(snapshot_, {"etcd"}), {"", type, reason, message, step.action}, *now);
  auto created = client_.Create({"v1", "events", namespace_, "", ""}, event, log);
  if (!created.ok()) return created.error();
  return {};
}

std::optional<std::chrono::milliseconds> KubernetesAdapter::PollInterval(const PlanStep& step) const {
  if (step.action == "WaitForPodsDeleted") return kPodsDeletedPollInterval;
  return std::nullopt;
}

Result<bool> KubernetesAdapter::IsDone(const PlanStep& step, RequestLog& log) {
  const std::string& action = step.action;
  const std::string name =
      StepValue(step, "name").is_string() ? StepValue(step, "name").string_value() : step.target;
  if (action == "SetEtcdCondition" || action == "SetMemberStatus" || action == "RemoveStatusMember" ||
      action == "SetClusterSize" || action == "RemoveEtcdCondition" || action == "SetEtcdReady") {
    auto etcd = FreshEtcd(log);
    if (!etcd.ok()) return etcd.error();
    if (action == "SetClusterSize")
      return Int(*etcd, {"status", "clusterSize"}, -1) == IntParam(step, "size");
    if (action == "SetEtcdReady") {
      const Value* ready = ValueAt(*etcd, {"status", "ready"});
      return ready != nullptr && *ready == StepValue(step, "ready");
    }
    const bool condition = action == "SetEtcdCondition" || action == "RemoveEtcdCondition";
    const Value::List list = ListAt(*etcd, {"status", condition ? "conditions" : "members"});
    const int at =
        IndexOf(list, condition ? "type" : "name", condition ? StepValue(step, "type").string_value() : name);
    if (action == "RemoveStatusMember" || action == "RemoveEtcdCondition") return at < 0;
    if (at < 0) return false;
    return condition ? HasFields(list[static_cast<size_t>(at)], step, {"status", "reason", "message"})
                     : HasFields(list[static_cast<size_t>(at)], step, {"id", "role", "status", "reason"});
  }
  if (action == "MarkRebootstrap") {
    auto etcd = FreshEtcd(log);
    if (!etcd.ok()) return etcd.error();
    return Text(*etcd, {"metadata", "annotations", kRebootstrapAnnotation}) ==
           RebootstrapMarker(step, *ValueAt(snapshot_, {"etcd"}));
  }
  if (action == "ScaleStatefulSet") {
    auto scale = client_.Get({"apps/v1", "statefulsets", namespace_, step.target, "scale"}, log);
    if (!scale.ok()) return scale.error();
    // A Scale of 0 replicas leaves the field out (omitempty).
    return Int(*scale, {"spec", "replicas"}, 0) == IntParam(step, "replicas");
  }
  if (action == "DeletePod") return PodGone(name, log);
  if (action == "WaitForPodsDeleted") {
    for (const Value& pod :
         StepValue(step, "names").is_list() ? StepValue(step, "names").list_value() : Value::List{}) {
      auto gone = PodGone(pod.string_value(), log);
      if (!gone.ok() || !*gone) return gone;
    }
    return true;
  }
  if (action == "CreateMemberLease" || action == "CreateSnapshotLease" || action == "DeleteMemberLease") {
    auto lease = Exists({"coordination.k8s.io/v1", "leases", namespace_, name, ""}, log);
    if (!lease.ok()) return lease.error();
    return *lease == (action != "DeleteMemberLease");
  }
  if (action == "ApplyEtcdServices") {
    for (const char* suffix : {"-client", "-peer"}) {
      auto service = Exists({"v1", "services", namespace_, etcd_name_ + suffix, ""}, log);
      if (!service.ok() || !*service) return service;
    }
    return true;
  }
  if (action == "CreateStatefulSet") {
    // Done when the StatefulSet was rendered from the spec this plan saw, and the status says so.
    const int64_t generation = Int(*ValueAt(snapshot_, {"etcd"}), {"metadata", "generation"}, 0);
    auto statefulset = client_.Get({"apps/v1", "statefulsets", namespace_, etcd_name_, ""}, log);
    if (!statefulset.ok()) {
      if (statefulset.error().code == ErrorCode::kNotFound) return false;
      return statefulset.error();
    }
    if (RenderedGeneration(*statefulset) != generation) return false;
    auto etcd = FreshEtcd(log);
    if (!etcd.ok()) return etcd.error();
    return Int(*etcd, {"status", "observedGeneration"}, 0) >= generation;
  }
  if (action == "SetPdbMinAvailable") {
    for (const char* version : {"policy/v1", "policy/v1beta1"}) {
      auto budget = client_.Get({version, "poddisruptionbudgets", namespace_, etcd_name_, ""}, log);
      if (budget.ok()) return Int(*budget, {"spec", "minAvailable"}, -1) == IntParam(step, "minAvailable");
      if (budget.error().code != ErrorCode::kNotFound) return budget.error();
    }
    return false;
  }
  if (action == "RaiseAlert")
    return EventRecorded("RuleplaneAlert", StepValue(step, "summary").string_value(), log);
  if (action == "PostponeMaintenance") {
    return EventRecorded(
        "MaintenancePostponed",
        StepValue(step, "operation").string_value() + ": " + StepValue(step, "reason").string_value(), log);
  }
  if (action == "ApplyStatefulSetSpec") {
    auto etcd = FreshEtcd(log);
    if (!etcd.ok()) return etcd.error();
    return Int(*etcd, {"status", "observedGeneration"}, 0) >= IntParam(step, "generation");
  }
  if (action == "ApplyEtcdConfigMap") {
    auto config_map = client_.Get(
        {"v1", "configmaps", namespace_, EtcdConfigMapName(*ValueAt(snapshot_, {"etcd"})), ""}, log);
    if (!config_map.ok() && config_map.error().code != ErrorCode::kNotFound) return config_map.error();
    return config_map.ok() && InitialClusterSize(*config_map) == IntParam(step, "replicas");
  }
  if (action == "CreateCompactionJob") {
    return Exists({"batch/v1", "jobs", namespace_, CompactionJobName(*ValueAt(snapshot_, {"etcd"})), ""},
                  log);
  }
  return false;  // Perform says why it cannot
}

Status KubernetesAdapter::CheckEtcdAsObserved(RequestLog& log) {
  const Value& observed = *ValueAt(snapshot_, {"etcd"});
  auto fresh = FreshEtcd(log);
  if (!fresh.ok()) {
    if (fresh.error().code == ErrorCode::kNotFound)
      return Error{ErrorCode::kConflict, "the Etcd " + etcd_name_ + " is gone: re-observe", {}};
    return fresh.error();
  }
  if (Text(*fresh, {"metadata", "uid"}) != Text(observed, {"metadata", "uid"})) {
    return Error{ErrorCode::kConflict,
                 "the Etcd " + etcd_name_ + " was replaced (uid " + Text(*fresh, {"metadata", "uid"}) +
                     ", the plan observed " + Text(observed, {"metadata", "uid"}) + "): re-observe",
                 {}};
  }
  const int64_t generation = Int(*fresh, {"metadata", "generation"}, -1);
  const int64_t decided_on = Int(observed, {"metadata", "generation"}, -1);
  if (generation != decided_on) {
    return Error{ErrorCode::kConflict,
                 "the Etcd's spec changed since the plan's observation (generation " +
                     std::to_string(generation) + ", the plan observed " + std::to_string(decided_on) +
                     "): re-observe",
                 {}};
  }
  return {};
}

Status KubernetesAdapter::Perform(const PlanStep& step, RequestLog& log) {
  const std::string& action = step.action;
  // A write to another object than the Etcd rests on the Etcd's spec as
  // observed: fenced by its uid and generation, read now (the Etcd's own
  // writes are fenced by its resourceVersion).
  static const std::set<std::string, std::less<>> kDecidedOnTheSpec = {
      "ScaleStatefulSet",    "DeletePod",          "CreateMemberLease",  "DeleteMemberLease",
      "CreateSnapshotLease", "SetPdbMinAvailable", "ApplyEtcdConfigMap", "ApplyEtcdServices",
      "CreateStatefulSet",   "CreateCompactionJob"};
  if (kDecidedOnTheSpec.count(action) > 0 && !log.dry_run()) {
    if (Status unchanged = CheckEtcdAsObserved(log); !unchanged.ok()) return unchanged;
  }
  const std::string name =
      StepValue(step, "name").is_string() ? StepValue(step, "name").string_value() : step.target;
  const Value& etcd = Tracked("etcd", *ValueAt(snapshot_, {"etcd"}));
  if (action == "SetEtcdCondition") {
    const Value condition = StatusEntry(step, "type", StepValue(step, "type").string_value(),
                                        {"status", "reason", "message", "lastTransitionTime"});
    return PatchEtcdStatus(
        Value::MakeMap(
            {{Value::String("conditions"),
              Value::MakeList(WithStatusEntry(ListAt(etcd, {"status", "conditions"}), "type", condition))}}),
        log);
  }
  if (action == "RemoveEtcdCondition" || action == "RemoveStatusMember") {
    const bool condition = action == "RemoveEtcdCondition";
    Value::List list = ListAt(etcd, {"status", condition ? "conditions" : "members"});
    const std::string key = condition ? StepValue(step, "type").string_value() : name;
    std::erase_if(list,
                  [&](const Value& entry) { return Text(entry, {condition ? "type" : "name"}) == key; });
    return PatchEtcdStatus(Value::MakeMap({{Value::String(condition ? "conditions" : "members"),
                                            Value::MakeList(std::move(list))}}),
                           log);
  }
  if (action == "SetMemberStatus") {
    const Value member =
        StatusEntry(step, "name", name, {"id", "role", "status", "reason", "lastTransitionTime"});
    return PatchEtcdStatus(
        Value::MakeMap(
            {{Value::String("members"),
              Value::MakeList(WithStatusEntry(ListAt(etcd, {"status", "members"}), "name", member))}}),
        log);
  }
  if (action == "SetClusterSize") {
    return PatchEtcdStatus(
        Value::MakeMap({{Value::String("clusterSize"), Value::Int(IntParam(step, "size"))}}), log);
  }
  if (action == "SetEtcdReady")
    return PatchEtcdStatus(Value::MakeMap({{Value::String("ready"), StepValue(step, "ready")}}), log);
  if (action == "MarkRebootstrap") {
    // Fenced by the Etcd's resourceVersion as observed (or as this plan's own
    // last write left it): a marker written on a stale decision is refused.
    Value& etcd = Tracked("etcd", *ValueAt(snapshot_, {"etcd"}));
    const std::string version = Text(etcd, {"metadata", "resourceVersion"});
    if (version.empty())
      return Error{ErrorCode::kFailedPrecondition, "the Etcd was observed without a resourceVersion", {}};
    const Value patch = Value::MakeMap(
        {{Value::String("metadata"),
          Value::MakeMap({{Value::String("resourceVersion"), Value::String(version)},
                          {Value::String("annotations"),
                           Value::MakeMap({{Value::String(kRebootstrapAnnotation),
                                            Value::String(RebootstrapMarker(step, etcd))}})}})}});
    auto patched = client_.MergePatch({"druid.gardener.cloud/v1alpha1", "etcds", namespace_, etcd_name_, ""},
                                      patch, log);
    if (!patched.ok()) return patched.error();
    if (!patched->is_null()) etcd = *patched;
    return {};
  }
  if (action == "ScaleStatefulSet") {
    const Value* observed = ValueAt(snapshot_, {"statefulSet"});
    if (observed == nullptr) return Error{ErrorCode::kFailedPrecondition, "no StatefulSet was observed", {}};
    Value& statefulset = Tracked("statefulset", *observed);
    auto scaled = client_.MergePatch(
        {"apps/v1", "statefulsets", namespace_, step.target, "scale"},
        FencedMergePatch(
            Text(statefulset, {"metadata", "resourceVersion"}), "spec",
            Value::MakeMap({{Value::String("replicas"), Value::Int(IntParam(step, "replicas"))}})),
        log);
    if (!scaled.ok()) return scaled.error();
    // The Scale's resourceVersion is the StatefulSet's.
    if (!scaled->is_null()) {
      statefulset = With(statefulset, "metadata",
                         With(*ValueAt(statefulset, {"metadata"}), "resourceVersion",
                              Value::String(Text(*scaled, {"metadata", "resourceVersion"}))));
    }
    return {};
  }
  if (action == "DeletePod") {
    std::string uid;
    for (const Value& pod : ListAt(snapshot_, {"pods"})) {
      if (Text(pod, {"metadata", "name"}) == name) uid = Text(pod, {"metadata", "uid"});
    }
    if (uid.empty()) return Error{ErrorCode::kFailedPrecondition, "pod " + name + " was not observed", {}};
    // Deleted directly, never evicted, and only the pod that was observed.
    return client_.Delete({"v1", "pods", namespace_, name, ""}, {"", uid}, std::nullopt, log);
  }
  // Sends nothing: the executor asks IsDone, and pauses the plan while it is not (PollInterval).
  if (action == "WaitForPodsDeleted") return {};
  if (action == "CreateMemberLease" || action == "CreateSnapshotLease") {
    const Value& observed = *ValueAt(snapshot_, {"etcd"});
    const Value lease = Value::MakeMap(
        {{Value::String("apiVersion"), Value::String("coordination.k8s.io/v1")},
         {Value::String("kind"), Value::String("Lease")},
         {Value::String("metadata"),
          Value::MakeMap(
              {{Value::String("name"), Value::String(name)},
               {Value::String("labels"),
                Value::MakeMap({{Value::String("app.kubernetes.io/part-of"), Value::String(etcd_name_)},
                                {Value::String("gardener.cloud/purpose"),
                                 Value::String(action == "CreateMemberLease" ? "etcd-member-lease"
                                                                             : "etcd-snapshot-lease")}})},
               {Value::String("ownerReferences"),
                Value::MakeList({Value::MakeMap(
                    {{Value::String("apiVersion"), Value::String("druid.gardener.cloud/v1alpha1")},
                     {Value::String("kind"), Value::String("Etcd")},
                     {Value::String("name"), Value::String(etcd_name_)},
                     {Value::String("uid"), Value::String(Text(observed, {"metadata", "uid"}))},
                     {Value::String("controller"), Value::Bool(true)}})})}})}});
    return CreateUnlessPresent({"coordination.k8s.io/v1", "leases", namespace_, "", ""}, lease, log);
  }
  if (action == "ApplyEtcdServices") {
    auto services = EtcdServices(*ValueAt(snapshot_, {"etcd"}));
    if (!services.ok()) return services.error();
    for (const Value& service : *services) {
      if (Status created = CreateUnlessPresent({"v1", "services", namespace_, "", ""}, service, log);
          !created.ok())
        return created;
    }
    return {};
  }
  if (action == "CreateStatefulSet") {
    const Value& etcd = *ValueAt(snapshot_, {"etcd"});
    const int64_t generation = Int(etcd, {"metadata", "generation"}, 0);
    auto statefulset = EtcdStatefulSet(etcd, IntParam(step, "replicas"));
    if (!statefulset.ok()) return statefulset.error();
    auto created = client_.Create({"apps/v1", "statefulsets", namespace_, "", ""}, *statefulset, log);
    if (!created.ok()) {
      if (created.error().code != ErrorCode::kConflict) return created.error();
      // AlreadyExists: created by an earlier run of this step (a crash before
      // the status below), or from an older spec, which this step must not
      // claim as applied.
      auto existing = client_.Get({"apps/v1", "statefulsets", namespace_, etcd_name_, ""}, log);
      if (!existing.ok()) return existing.error();
      const int64_t rendered = RenderedGeneration(*existing);
      if (rendered != generation) {
        return Error{ErrorCode::kConflict,
                     "the StatefulSet " + etcd_name_ + " exists, rendered from " +
                         (rendered < 0 ? std::string("an unknown generation")
                                       : "generation " + std::to_string(rendered)) +
                         ", not from generation " + std::to_string(generation) +
                         ": re-observe (applying the newer spec is ApplyStatefulSetSpec's)",
                     {}};
      }
    }
    // Rendered from this generation's spec: nothing is left for ApplyStatefulSetSpec to apply.
    return PatchEtcdStatus(Value::MakeMap({{Value::String("observedGeneration"), Value::Int(generation)}}),
                           log);
  }
  if (action == "DeleteMemberLease") {
    // Fenced by the uid observed: the Lease the plan was made from, not one
    // created since. (Not its resourceVersion: a running member renews it.)
    std::string uid;
    for (const Value& lease : ListAt(snapshot_, {"leases"})) {
      if (Text(lease, {"metadata", "name"}) == name) uid = Text(lease, {"metadata", "uid"});
    }
    if (uid.empty()) return Error{ErrorCode::kFailedPrecondition, "lease " + name + " was not observed", {}};
    return client_.Delete({"coordination.k8s.io/v1", "leases", namespace_, name, ""}, {"", uid}, std::nullopt,
                          log);
  }
  if (action == "SetPdbMinAvailable") {
    const Value min_available = Value::Int(IntParam(step, "minAvailable"));
    if (const Value* observed = ValueAt(snapshot_, {"podDisruptionBudget"})) {
      Value& budget = Tracked("budget", *observed);
      const std::string version = Text(budget, {"apiVersion"});
      auto patched = client_.MergePatch(
          {version.empty() ? "policy/v1" : version, "poddisruptionbudgets", namespace_, etcd_name_, ""},
          FencedMergePatch(Text(budget, {"metadata", "resourceVersion"}), "spec",
                           Value::MakeMap({{Value::String("minAvailable"), min_available}})),
          log);
      if (!patched.ok()) return patched.error();
      if (!patched->is_null()) budget = *patched;
      return {};
    }
    // The StatefulSet's selector; before it is observed, the one CreateStatefulSet gives it.
    const Value rendered = EtcdPodSelector(*ValueAt(snapshot_, {"etcd"}));
    const Value* selector = ValueAt(snapshot_, {"statefulSet", "spec", "selector"});
    if (selector == nullptr) selector = &rendered;
    const Value budget = Value::MakeMap(
        {{Value::String("apiVersion"), Value::String("policy/v1beta1")},
         {Value::String("kind"), Value::String("PodDisruptionBudget")},
         {Value::String("metadata"),
          Value::MakeMap({{Value::String("name"), Value::String(etcd_name_)},
                          {Value::String("ownerReferences"),
                           Value::MakeList({Value::MakeMap(
                               {{Value::String("apiVersion"), Value::String("druid.gardener.cloud/v1alpha1")},
                                {Value::String("kind"), Value::String("Etcd")},
                                {Value::String("name"), Value::String(etcd_name_)},
                                {Value::String("uid"), Value::String(Text(etcd, {"metadata", "uid"}))},
                                {Value::String("controller"), Value::Bool(true)}})})}})},
         {Value::String("spec"), Value::MakeMap({{Value::String("minAvailable"), min_available},
                                                 {Value::String("selector"), *selector}})}});
    auto created =
        client_.Create({"policy/v1beta1", "poddisruptionbudgets", namespace_, "", ""}, budget, log);
    if (!created.ok()) return created.error();
    return {};
  }
  if (action == "RaiseAlert") {
    return RecordEvent(step, "Warning", "RuleplaneAlert", StepValue(step, "summary").string_value(), log);
  }
  if (action == "PostponeMaintenance") {
    return RecordEvent(
        step, "Normal", "MaintenancePostponed",
        StepValue(step, "operation").string_value() + ": " + StepValue(step, "reason").string_value(), log);
  }
  if (action == "ApplyStatefulSetSpec") return ApplyStatefulSetSpec(step, log);
  if (action == "ApplyEtcdConfigMap") {
    auto rendered = EtcdConfigMap(*ValueAt(snapshot_, {"etcd"}), IntParam(step, "replicas"));
    if (!rendered.ok()) return rendered.error();
    const KubeResource config_map{"v1", "configmaps", namespace_,
                                  EtcdConfigMapName(*ValueAt(snapshot_, {"etcd"})), ""};
    auto current = client_.Get(config_map, log);
    if (!current.ok() && current.error().code != ErrorCode::kNotFound) return current.error();
    Result<Value> written =
        current.ok() ? client_.MergePatch(config_map,
                                          FencedMergePatch(Text(*current, {"metadata", "resourceVersion"}),
                                                           "data", *ValueAt(*rendered, {"data"})),
                                          log)
                     : client_.Create({"v1", "configmaps", namespace_, "", ""}, *rendered, log);
    if (!written.ok()) return written.error();
    return {};
  }
  if (action == "CreateCompactionJob") {
    auto job = CompactionJob(*ValueAt(snapshot_, {"etcd"}));
    if (!job.ok()) return job.error();
    // AlreadyExists: a job of this name runs or ran; etcd-druid waits for it too.
    return CreateUnlessPresent({"batch/v1", "jobs", namespace_, "", ""}, *job, log);
  }
  return Error{ErrorCode::kFailedPrecondition, "the kubernetes adapter does not perform " + action, {}};
}

Status KubernetesAdapter::ApplyStatefulSetSpec(const PlanStep& step, RequestLog& log) {
  const int64_t generation = IntParam(step, "generation");
  auto fresh = FreshEtcd(log);
  if (!fresh.ok()) return fresh.error();
  // The spec of this generation is the one observed; a newer one needs a new plan.
  if (Int(*fresh, {"metadata", "generation"}, -1) != generation ||
      Int(*ValueAt(snapshot_, {"etcd"}), {"metadata", "generation"}, -1) != generation) {
    return Error{ErrorCode::kConflict,
                 "the Etcd is at generation " + std::to_string(Int(*fresh, {"metadata", "generation"}, -1)) +
                     ", the plan applies " + std::to_string(generation) + ": re-observe",
                 {}};
  }
  const Value* observed = ValueAt(snapshot_, {"statefulSet"});
  if (observed == nullptr) return Error{ErrorCode::kFailedPrecondition, "no StatefulSet was observed", {}};
  Value& statefulset = Tracked("statefulset", *observed);
  const Value* pod_template = ValueAt(statefulset, {"spec", "template"});
  if (pod_template == nullptr)
    return Error{ErrorCode::kFailedPrecondition, "the StatefulSet has no pod template", {}};
  Value patch = FencedMergePatch(
      Text(statefulset, {"metadata", "resourceVersion"}), "spec",
      Value::MakeMap(
          {{Value::String("template"), PodTemplateForSpec(*ValueAt(snapshot_, {"etcd"}), *pod_template)}}));
  // The generation it is now rendered from (CreateStatefulSet's check).
  patch = With(patch, "metadata",
               With(*ValueAt(patch, {"metadata"}), "annotations",
                    Value::MakeMap({{Value::String(kRenderedGenerationAnnotation),
                                     Value::String(std::to_string(generation))}})));
  auto patched = client_.MergePatch(
      {"apps/v1", "statefulsets", namespace_, Text(statefulset, {"metadata", "name"}), ""}, patch, log);
  if (!patched.ok()) return patched.error();
  if (!patched->is_null()) statefulset = *patched;
  return PatchEtcdStatus(Value::MakeMap({{Value::String("observedGeneration"), Value::Int(generation)}}),
                         log);
}

}  // namespace ruleplane
