// MarkRebootstrap: the Etcd's kRebootstrapAnnotation, "<backup revision>:<approval>".
#include "actions/kubernetes/kubernetes_action_handler.h"
#include "adapters/kubernetes/etcd_annotations.h"
#include "adapters/kubernetes/object_fields.h"

namespace ruleplane {
namespace {

// The marker the step writes: the backup revision and the approval the
// observed Etcd carries.
std::string RebootstrapMarker(const PlanStep& step, const Value& observed_etcd) {
  const std::string approval = FieldText(observed_etcd, {"metadata", "annotations", kApprovePlanAnnotation});
  return std::to_string(IntParam(step, "backupRevision")) + ":" + (approval.empty() ? "auto" : approval);
}

Result<bool> IsDone(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  auto etcd = context.FreshEtcd(log);
  if (!etcd.ok()) return etcd.error();
  return FieldText(*etcd, {"metadata", "annotations", kRebootstrapAnnotation}) ==
         RebootstrapMarker(step, context.observed_etcd());
}

// Fenced by the Etcd's resourceVersion as observed (or as this plan's own
// last write left it): a marker written on a stale decision is refused.
Status Perform(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  const std::string marker = RebootstrapMarker(step, context.TrackedEtcd());
  return context.PatchEtcdMetadata(
      {{Value::String("annotations"),
        Value::MakeMap({{Value::String(kRebootstrapAnnotation), Value::String(marker)}})}},
      log);
}

}  // namespace

KubernetesActionHandler MarkRebootstrapHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
