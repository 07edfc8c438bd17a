// CreateStatefulSet: <etcd> with its member pod template, annotated with the
// Etcd generation it was rendered from; done only when the one that exists
// names this plan's generation: one from an older spec is kConflict
// (re-observe: ApplyStatefulSetSpec's to update).
#include "actions/kubernetes/kubernetes_action_handler.h"
#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/object_fields.h"

namespace ruleplane {
namespace {

// Done when the StatefulSet was rendered from the spec this plan saw, and the status says so.
Result<bool> IsDone(const PlanStep& /*step*/, KubernetesActionContext& context, RequestLog& log) {
  const int64_t generation = FieldInt(context.observed_etcd(), {"metadata", "generation"}, 0);
  auto statefulset = context.client().Get(
      {"apps/v1", "statefulsets", context.namespace_name(), context.etcd_name(), ""}, log);
  if (!statefulset.ok()) {
    if (statefulset.error().code == ErrorCode::kNotFound) return false;
    return statefulset.error();
  }
  if (RenderedGeneration(*statefulset) != generation) return false;
  auto etcd = context.FreshEtcd(log);
  if (!etcd.ok()) return etcd.error();
  return FieldInt(*etcd, {"status", "observedGeneration"}, 0) >= generation;
}

Status Perform(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  const Value& etcd = context.observed_etcd();
  const std::string& name = context.etcd_name();
  const int64_t generation = FieldInt(etcd, {"metadata", "generation"}, 0);
  auto statefulset = EtcdStatefulSet(etcd, IntParam(step, "replicas"), context.member_init_rules());
  if (!statefulset.ok()) return statefulset.error();
  auto created = context.client().Create({"apps/v1", "statefulsets", context.namespace_name(), "", ""},
                                         *statefulset, log);
  if (!created.ok()) {
    if (created.error().code != ErrorCode::kConflict) return created.error();
    // AlreadyExists: created by an earlier run of this step (a crash before
    // the status below), or from an older spec, which this step must not
    // claim as applied.
    auto existing =
        context.client().Get({"apps/v1", "statefulsets", context.namespace_name(), name, ""}, log);
    if (!existing.ok()) return existing.error();
    // One the Etcd does not own is someone else's, with their members' data:
    // never taken over (etcd-druid adopts it); the owner decides.
    if (!OwnedBy(*existing, FieldText(etcd, {"metadata", "uid"}))) {
      return Error{ErrorCode::kFailedPrecondition,
                   "a StatefulSet " + name + " exists that the Etcd does not own (no ownerReference to uid " +
                       FieldText(etcd, {"metadata", "uid"}) +
                       "): ruleplane does not take it over; give it that ownerReference to have it adopted, "
                       "or move it away",
                   {}};
    }
    const int64_t rendered = RenderedGeneration(*existing);
    if (rendered != generation) {
      return Error{ErrorCode::kConflict,
                   "the StatefulSet " + name + " exists, rendered from " +
                       (rendered < 0 ? std::string("an unknown generation")
                                     : "generation " + std::to_string(rendered)) +
                       ", not from generation " + std::to_string(generation) +
                       ": re-observe (applying the newer spec is ApplyStatefulSetSpec's)",
                   {}};
    }
  }
  // Rendered from this generation's spec: nothing is left for ApplyStatefulSetSpec to apply.
  return context.PatchEtcdStatus(
      Value::MakeMap({{Value::String("observedGeneration"), Value::Int(generation)}}), log);
}

}  // namespace

KubernetesActionHandler CreateStatefulSetHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = EtcdSpecAsObserved, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
