#include "actions/kubernetes/kubernetes_action_context.h"

#include <ctime>

#include "adapters/kubernetes/etcd_event.h"
#include "adapters/kubernetes/manifests.h"
#include "adapters/kubernetes/object_fields.h"
#include "engine/common/time_util.h"

namespace ruleplane {

KubernetesActionContext::KubernetesActionContext(KubeClient& client, const Snapshot& snapshot,
                                                 std::vector<std::string> member_init_rules)
    : client_(client), snapshot_(snapshot.document), member_init_rules_(std::move(member_init_rules)) {
  namespace_ = FieldText(snapshot_, {"etcd", "metadata", "namespace"});
  etcd_name_ = FieldText(snapshot_, {"etcd", "metadata", "name"});
}

const Value& KubernetesActionContext::observed_etcd() const { return *ValueAt(snapshot_, {"etcd"}); }

Value& KubernetesActionContext::Tracked(const std::string& key, const Value& observed) {
  auto found = tracked_.find(key);
  if (found == tracked_.end()) found = tracked_.emplace(key, observed).first;
  return found->second;
}

Result<Value*> KubernetesActionContext::TrackedStatefulSet() {
  const Value* observed = ValueAt(snapshot_, {"statefulSet"});
  if (observed == nullptr) return Error{ErrorCode::kFailedPrecondition, "no StatefulSet was observed", {}};
  return &Tracked("statefulset", *observed);
}

Result<Value> KubernetesActionContext::FreshEtcd(RequestLog& log) {
  return client_.Get({"druid.gardener.cloud/v1alpha1", "etcds", namespace_, etcd_name_, ""}, log);
}

Status KubernetesActionContext::PatchEtcdStatus(const Value& status_patch, RequestLog& log) {
  Value& etcd = TrackedEtcd();
  auto patched = client_.MergePatch(
      {"druid.gardener.cloud/v1alpha1", "etcds", namespace_, etcd_name_, "status"},
      FencedMergePatch(FieldText(etcd, {"metadata", "resourceVersion"}), "status", status_patch), log);
  // The status of an Etcd whose teardown ended is nobody's to read.
  if (!patched.ok() && patched.error().code == ErrorCode::kNotFound) {
    auto torn_down = EtcdTornDown(log);
    if (torn_down.ok() && *torn_down) return {};
  }
  if (!patched.ok()) return patched.error();
  if (!patched->is_null()) etcd = *patched;
  return {};
}

Status KubernetesActionContext::PatchEtcdMetadata(Value::Map fields, RequestLog& log) {
  Value& etcd = TrackedEtcd();
  const std::string version = FieldText(etcd, {"metadata", "resourceVersion"});
  if (version.empty())
    return Error{ErrorCode::kFailedPrecondition, "the Etcd was observed without a resourceVersion", {}};
  fields.emplace_back(Value::String("resourceVersion"), Value::String(version));
  auto patched = client_.MergePatch(
      {"druid.gardener.cloud/v1alpha1", "etcds", namespace_, etcd_name_, ""},
      Value::MakeMap({{Value::String("metadata"), Value::MakeMap(std::move(fields))}}), log);
  if (!patched.ok()) return patched.error();
  if (!patched->is_null()) etcd = *patched;
  return {};
}

Status KubernetesActionContext::CheckEtcdAsObserved(RequestLog& log) {
  const Value& observed = observed_etcd();
  auto fresh = FreshEtcd(log);
  if (!fresh.ok()) {
    if (fresh.error().code == ErrorCode::kNotFound)
      return Error{ErrorCode::kConflict, "the Etcd " + etcd_name_ + " is gone: re-observe", {}};
    return fresh.error();
  }
  if (FieldText(*fresh, {"metadata", "uid"}) != FieldText(observed, {"metadata", "uid"})) {
    return Error{ErrorCode::kConflict,
                 "the Etcd " + etcd_name_ + " was replaced (uid " + FieldText(*fresh, {"metadata", "uid"}) +
                     ", the plan observed " + FieldText(observed, {"metadata", "uid"}) + "): re-observe",
                 {}};
  }
  // Nothing is created or changed for an Etcd on its way out: only its
  // teardown runs (its actions are not fenced by the spec).
  if (ValueAt(*fresh, {"metadata", "deletionTimestamp"}) != nullptr) {
    return Error{ErrorCode::kConflict, "the Etcd " + etcd_name_ + " is being deleted: re-observe", {}};
  }
  const int64_t generation = FieldInt(*fresh, {"metadata", "generation"}, -1);
  const int64_t decided_on = FieldInt(observed, {"metadata", "generation"}, -1);
  if (generation != decided_on) {
    return Error{ErrorCode::kConflict,
                 "the Etcd's spec changed since the plan's observation (generation " +
                     std::to_string(generation) + ", the plan observed " + std::to_string(decided_on) +
                     "): re-observe",
                 {}};
  }
  return {};
}

Result<bool> KubernetesActionContext::EtcdTornDown(RequestLog& log) {
  if (ValueAt(observed_etcd(), {"metadata", "deletionTimestamp"}) == nullptr) return false;
  auto fresh = FreshEtcd(log);
  if (fresh.ok())
    return FieldText(*fresh, {"metadata", "uid"}) != FieldText(observed_etcd(), {"metadata", "uid"});
  if (fresh.error().code == ErrorCode::kNotFound) return true;
  return fresh.error();
}

std::string KubernetesActionContext::ObservedUid(std::string_view list, const std::string& name) const {
  std::string uid;
  for (const Value& observed : FieldList(snapshot_, {list})) {
    if (FieldText(observed, {"metadata", "name"}) == name) uid = FieldText(observed, {"metadata", "uid"});
  }
  return uid;
}

Result<bool> KubernetesActionContext::Exists(const KubeResource& resource, RequestLog& log) {
  auto object = Find(resource, log);
  if (!object.ok()) return object.error();
  return object->has_value();
}

Result<std::optional<Value>> KubernetesActionContext::Find(const KubeResource& resource, RequestLog& log) {
  auto object = client_.Get(resource, log);
  if (!object.ok() && object.error().code == ErrorCode::kNotFound) return std::optional<Value>();
  if (!object.ok()) return object.error();
  return std::optional<Value>(*std::move(object));
}

Status KubernetesActionContext::CreateUnlessPresent(const KubeResource& collection, const Value& object,
                                                    RequestLog& log) {
  auto created = client_.Create(collection, object, log);
  // 409 AlreadyExists: created before (by an earlier run of this step) or by someone else; IsDone decides.
  if (!created.ok() && created.error().code != ErrorCode::kConflict) return created.error();
  return {};
}

Result<KubernetesActionContext::LiveObject> KubernetesActionContext::FindRendered(const Value& rendered,
                                                                                  RequestLog& log) {
  auto resource = ResourceOf(rendered, namespace_);
  if (!resource.ok()) return resource.error();
  auto live = Find(*resource, log);
  if (!live.ok()) return live.error();
  return LiveObject{*std::move(resource), *std::move(live)};
}

Result<bool> KubernetesActionContext::RenderedCurrent(const Value::List& rendered,
                                                      const RenderedCheck& current, RequestLog& log,
                                                      const RenderedRefusal& refused) {
  for (const Value& object : rendered) {
    auto found = FindRendered(object, log);
    if (!found.ok()) return found.error();
    if (!found->live || (refused && !refused(object, *found->live).empty()) || !current(object, *found->live))
      return false;
  }
  return true;
}

Status KubernetesActionContext::ApplyRendered(const Value::List& rendered, const RenderedCheck& current,
                                              const RenderedPatch& patch, RequestLog& log,
                                              const RenderedRefusal& refused) {
  for (const Value& object : rendered) {
    auto found = FindRendered(object, log);
    if (!found.ok()) return found.error();
    if (!found->live) {
      KubeResource collection = found->resource;
      collection.name.clear();
      if (Status created = CreateUnlessPresent(collection, object, log); !created.ok()) return created;
      continue;
    }
    const Value& live = *found->live;
    if (refused) {
      if (std::string why = refused(object, live); !why.empty())
        return Error{ErrorCode::kFailedPrecondition, why, {}};
    }
    if (current(object, live)) continue;
    // Fenced by the resourceVersion just read: an object changed since is read again.
    Value body = patch(object, live);
    const Value* metadata = ValueAt(body, {"metadata"});
    body = WithField(body, "metadata",
                     WithField(metadata != nullptr ? *metadata : Value::MakeMap({}), "resourceVersion",
                               Value::String(FieldText(live, {"metadata", "resourceVersion"}))));
    auto patched = client_.MergePatch(found->resource, body, log);
    if (!patched.ok()) return patched.error();
  }
  return {};
}

Result<bool> KubernetesActionContext::ObservedGone(const KubeResource& resource,
                                                   const std::string& observed_uid, RequestLog& log) {
  auto object = client_.Get(resource, log);
  if (!object.ok()) {
    if (object.error().code == ErrorCode::kNotFound) return true;
    return object.error();
  }
  return (!observed_uid.empty() && FieldText(*object, {"metadata", "uid"}) != observed_uid) ||
         ValueAt(*object, {"metadata", "deletionTimestamp"}) != nullptr;
}

Status KubernetesActionContext::DeleteObserved(const KubeResource& resource, const std::string& observed_uid,
                                               RequestLog& log, std::string_view propagation_policy) {
  if (observed_uid.empty()) {
    std::string kind = resource.plural;
    if (!kind.empty() && kind.back() == 's') kind.pop_back();
    return Error{ErrorCode::kFailedPrecondition, kind + " " + resource.name + " was not observed", {}};
  }
  return client_.Delete(resource, {"", observed_uid}, std::nullopt, log, propagation_policy);
}

Status KubernetesActionContext::RecordEvent(const PlanStep& step, const std::string& type,
                                            const std::string& reason, const std::string& message,
                                            RequestLog& log) {
  auto now = TimestampFromUnixSeconds(std::time(nullptr));
  if (!now.ok()) return now.error();
  const Value event = EtcdEvent(observed_etcd(), {"", type, reason, message, step.action}, *now);
  auto created = client_.Create({"v1", "events", namespace_, "", ""}, event, log);
  if (!created.ok()) return created.error();
  return {};
}

Result<bool> KubernetesActionContext::EventRecorded(const std::string& reason, const std::string& message,
                                                    RequestLog& log) {
  auto events =
      client_.List({"v1", "events", namespace_, "", ""}, "", log,
                   "involvedObject.name=" + etcd_name_ + ",involvedObject.kind=Etcd,reason=" + reason);
  if (!events.ok()) return events.error();
  auto hour_ago = TimestampFromUnixSeconds(std::time(nullptr) - 3600);
  if (!hour_ago.ok()) return hour_ago.error();
  for (const Value& event : FieldList(*events, {"items"})) {
    auto last = ParseRfc3339(FieldText(event, {"lastTimestamp"}));
    if (FieldText(event, {"message"}) == message && last.ok() && last->seconds >= hour_ago->seconds)
      return true;
  }
  return false;
}

}  // namespace ruleplane
