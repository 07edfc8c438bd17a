// DeleteEtcdComponents: what ruleplane created for the Etcd besides the
// StatefulSet, in this order: the compaction Job, the Leases observed, the
// Services, the configuration ConfigMap, the PodDisruptionBudget, the
// members' RoleBinding, Role and ServiceAccount. Only
// objects whose controlling owner is this Etcd (its uid), each by its uid;
// PersistentVolumeClaims and backups are kept, as etcd-druid keeps them.
#include "actions/kubernetes/kubernetes_action_handler.h"
#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/object_fields.h"

namespace ruleplane {
namespace {

struct OwnedObject {
  KubeResource resource;
  std::string uid;
};

bool ControlledBy(const Value& object, const std::string& owner_uid) {
  for (const Value& owner : FieldList(object, {"metadata", "ownerReferences"})) {
    if (FieldText(owner, {"uid"}) == owner_uid && ValueAt(owner, {"controller"}) != nullptr &&
        ValueAt(owner, {"controller"})->is_bool() && ValueAt(owner, {"controller"})->bool_value())
      return true;
  }
  return false;
}

// The components that still exist, are the Etcd's, and are not being deleted.
Result<std::vector<OwnedObject>> RemainingComponents(KubernetesActionContext& context, RequestLog& log) {
  const Value& etcd = context.observed_etcd();
  const std::string name = context.etcd_name(), ns = context.namespace_name();
  std::vector<KubeResource> candidates = {{"batch/v1", "jobs", ns, CompactionJobName(etcd), ""}};
  for (const Value& lease : FieldList(context.snapshot(), {"leases"}))
    candidates.push_back(
        {"coordination.k8s.io/v1", "leases", ns, FieldText(lease, {"metadata", "name"}), ""});
  candidates.push_back({"v1", "services", ns, name + "-client", ""});
  candidates.push_back({"v1", "services", ns, name + "-peer", ""});
  candidates.push_back({"v1", "configmaps", ns, EtcdConfigMapName(etcd), ""});
  auto v1 = context.client().Serves("policy/v1", "poddisruptionbudgets", log);
  if (!v1.ok()) return v1.error();
  candidates.push_back({*v1 ? "policy/v1" : "policy/v1beta1", "poddisruptionbudgets", ns, name, ""});
  candidates.push_back({"rbac.authorization.k8s.io/v1", "rolebindings", ns, MemberRoleName(etcd), ""});
  candidates.push_back({"rbac.authorization.k8s.io/v1", "roles", ns, MemberRoleName(etcd), ""});
  candidates.push_back({"v1", "serviceaccounts", ns, MemberServiceAccountName(etcd), ""});

  const std::string owner = FieldText(etcd, {"metadata", "uid"});
  std::vector<OwnedObject> remaining;
  for (KubeResource& candidate : candidates) {
    auto object = context.client().Get(candidate, log);
    if (!object.ok() && object.error().code == ErrorCode::kNotFound) continue;
    if (!object.ok()) return object.error();
    if (!ControlledBy(*object, owner) || ValueAt(*object, {"metadata", "deletionTimestamp"}) != nullptr)
      continue;
    remaining.push_back({std::move(candidate), FieldText(*object, {"metadata", "uid"})});
  }
  return remaining;
}

Result<bool> IsDone(const PlanStep& /*step*/, KubernetesActionContext& context, RequestLog& log) {
  auto remaining = RemainingComponents(context, log);
  if (!remaining.ok()) return remaining.error();
  return remaining->empty();
}

Status Perform(const PlanStep& /*step*/, KubernetesActionContext& context, RequestLog& log) {
  auto remaining = RemainingComponents(context, log);
  if (!remaining.ok()) return remaining.error();
  for (const OwnedObject& object : *remaining) {
    if (Status deleted =
            context.client().Delete(object.resource, {"", object.uid}, std::nullopt, log, "Background");
        !deleted.ok())
      return deleted;
  }
  return {};
}

}  // namespace

KubernetesActionHandler DeleteEtcdComponentsHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
