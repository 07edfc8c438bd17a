// SetPdbMinAvailable: the PodDisruptionBudget <etcd>'s minAvailable, fenced
// by its resourceVersion; created when none was observed, as policy/v1 where
// the API server serves it (Kubernetes 1.21 on; 1.25 removed policy/v1beta1).
#include "actions/kubernetes/kubernetes_action_handler.h"
#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/object_fields.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  for (const char* version : {"policy/v1", "policy/v1beta1"}) {
    auto budget = context.client().Get(
        {version, "poddisruptionbudgets", context.namespace_name(), context.etcd_name(), ""}, log);
    if (budget.ok()) return FieldInt(*budget, {"spec", "minAvailable"}, -1) == IntParam(step, "minAvailable");
    if (budget.error().code != ErrorCode::kNotFound) return budget.error();
  }
  return false;
}

Status Perform(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  const Value min_available = Value::Int(IntParam(step, "minAvailable"));
  if (const Value* observed = ValueAt(context.snapshot(), {"podDisruptionBudget"})) {
    Value& budget = context.Tracked("budget", *observed);
    const std::string version = FieldText(budget, {"apiVersion"});
    auto patched = context.client().MergePatch(
        {version.empty() ? "policy/v1" : version, "poddisruptionbudgets", context.namespace_name(),
         context.etcd_name(), ""},
        FencedMergePatch(FieldText(budget, {"metadata", "resourceVersion"}), "spec",
                         Value::MakeMap({{Value::String("minAvailable"), min_available}})),
        log);
    if (!patched.ok()) return patched.error();
    if (!patched->is_null()) budget = *patched;
    return {};
  }
  // The StatefulSet's selector; before it is observed, the one CreateStatefulSet gives it.
  const Value rendered = EtcdPodSelector(context.observed_etcd());
  const Value* selector = ValueAt(context.snapshot(), {"statefulSet", "spec", "selector"});
  if (selector == nullptr) selector = &rendered;
  auto v1 = context.client().Serves("policy/v1", "poddisruptionbudgets", log);
  if (!v1.ok()) return v1.error();
  const std::string version = *v1 ? "policy/v1" : "policy/v1beta1";
  auto created = context.client().Create(
      {version, "poddisruptionbudgets", context.namespace_name(), "", ""},
      EtcdPodDisruptionBudget(context.TrackedEtcd(), min_available, *selector, version), log);
  if (!created.ok()) return created.error();
  return {};
}

}  // namespace

KubernetesActionHandler SetPdbMinAvailableHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = EtcdSpecAsObserved, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
