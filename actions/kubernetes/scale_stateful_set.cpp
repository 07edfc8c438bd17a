// ScaleStatefulSet: the StatefulSet's /scale, fenced by its resourceVersion.
#include "actions/kubernetes/kubernetes_action_handler.h"
#include "adapters/kubernetes/object_fields.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  auto scale =
      context.client().Get({"apps/v1", "statefulsets", context.namespace_name(), step.target, "scale"}, log);
  if (!scale.ok()) return scale.error();
  // A Scale of 0 replicas leaves the field out (omitempty).
  return FieldInt(*scale, {"spec", "replicas"}, 0) == IntParam(step, "replicas");
}

Status Perform(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  auto tracked = context.TrackedStatefulSet();
  if (!tracked.ok()) return tracked.error();
  Value& statefulset = **tracked;
  auto scaled = context.client().MergePatch(
      {"apps/v1", "statefulsets", context.namespace_name(), step.target, "scale"},
      FencedMergePatch(FieldText(statefulset, {"metadata", "resourceVersion"}), "spec",
                       Value::MakeMap({{Value::String("replicas"), Value::Int(IntParam(step, "replicas"))}})),
      log);
  if (!scaled.ok()) return scaled.error();
  // The Scale's resourceVersion is the StatefulSet's.
  if (!scaled->is_null()) {
    statefulset = WithField(statefulset, "metadata",
                            WithField(*ValueAt(statefulset, {"metadata"}), "resourceVersion",
                                      Value::String(FieldText(*scaled, {"metadata", "resourceVersion"}))));
  }
  return {};
}

}  // namespace

KubernetesActionHandler ScaleStatefulSetHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = EtcdSpecAsObserved, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
