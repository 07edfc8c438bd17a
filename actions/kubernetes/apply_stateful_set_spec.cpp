// ApplyStatefulSetSpec: the pod template from the Etcd's spec and the
// generation annotation (etcd_templates.h), fenced by the StatefulSet's
// resourceVersion, then status.observedGeneration. A StatefulSet that
// ruleplane rendered (it names the generation it was rendered from) gets its
// whole pod template rendered again (TLS Secrets, flags, ...); another's
// (etcd-druid's, adopted) keeps its own, with the spec's images, resources,
// labels, priority class and scheduling constraints merged in
// (PodTemplateForSpec).
#include "actions/kubernetes/kubernetes_action_handler.h"
#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/object_fields.h"

namespace ruleplane {
namespace {

// A merge patch keeps what it does not name: a field the Etcd's spec owns and
// no longer sets (an affinity taken out) is named null, so it goes.
Value WithRemovedFieldsNamedNull(const Value& old_template, const Value& new_template) {
  const Value* new_spec = ValueAt(new_template, {"spec"});
  if (new_spec == nullptr) return new_template;
  Value spec = *new_spec;
  for (const char* field : kSpecOwnedPodFields) {
    if (ValueAt(old_template, {"spec", field}) != nullptr && ValueAt(spec, {field}) == nullptr)
      spec = WithField(spec, field, Value::Null());
  }
  return WithField(new_template, "spec", std::move(spec));
}

Result<bool> IsDone(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  auto etcd = context.FreshEtcd(log);
  if (!etcd.ok()) return etcd.error();
  return FieldInt(*etcd, {"status", "observedGeneration"}, 0) >= IntParam(step, "generation");
}

Status Perform(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  const int64_t generation = IntParam(step, "generation");
  auto fresh = context.FreshEtcd(log);
  if (!fresh.ok()) return fresh.error();
  // The spec of this generation is the one observed; a newer one needs a new plan.
  if (FieldInt(*fresh, {"metadata", "generation"}, -1) != generation ||
      FieldInt(context.observed_etcd(), {"metadata", "generation"}, -1) != generation) {
    return Error{ErrorCode::kConflict,
                 "the Etcd is at generation " +
                     std::to_string(FieldInt(*fresh, {"metadata", "generation"}, -1)) +
                     ", the plan applies " + std::to_string(generation) + ": re-observe",
                 {}};
  }
  auto tracked = context.TrackedStatefulSet();
  if (!tracked.ok()) return tracked.error();
  Value& statefulset = **tracked;
  const Value* pod_template = ValueAt(statefulset, {"spec", "template"});
  if (pod_template == nullptr)
    return Error{ErrorCode::kFailedPrecondition, "the StatefulSet has no pod template", {}};
  Value new_template = PodTemplateForSpec(context.observed_etcd(), *pod_template);
  if (RenderedGeneration(statefulset) >= 0) {
    auto rendered = EtcdStatefulSet(context.observed_etcd(), FieldInt(statefulset, {"spec", "replicas"}, 0),
                                    context.member_init_rules());
    if (!rendered.ok()) return rendered.error();
    new_template = *ValueAt(*rendered, {"spec", "template"});
  }
  Value patch = FencedMergePatch(
      FieldText(statefulset, {"metadata", "resourceVersion"}), "spec",
      Value::MakeMap({{Value::String("template"), WithRemovedFieldsNamedNull(*pod_template, new_template)}}));
  // The generation it is now rendered from (CreateStatefulSet's check).
  patch = WithField(patch, "metadata",
                    WithField(*ValueAt(patch, {"metadata"}), "annotations",
                              Value::MakeMap({{Value::String(kRenderedGenerationAnnotation),
                                               Value::String(std::to_string(generation))}})));
  auto patched = context.client().MergePatch(
      {"apps/v1", "statefulsets", context.namespace_name(), FieldText(statefulset, {"metadata", "name"}), ""},
      patch, log);
  if (!patched.ok()) return patched.error();
  if (!patched->is_null()) statefulset = *patched;
  return context.PatchEtcdStatus(
      Value::MakeMap({{Value::String("observedGeneration"), Value::Int(generation)}}), log);
}

}  // namespace

KubernetesActionHandler ApplyStatefulSetSpecHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
