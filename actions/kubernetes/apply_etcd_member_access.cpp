// ApplyEtcdMemberAccess: the members' ServiceAccount <etcd>, Role and
// RoleBinding druid.gardener.cloud:etcd:<etcd> (etcd_templates.h), each
// created when missing; a Role whose rules differ from the rendered ones
// (written by an older ruleplane) gets them, fenced by its resourceVersion.
#include "actions/kubernetes/kubernetes_action_handler.h"
#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/object_fields.h"

namespace ruleplane {
namespace {

// Whether `live` is what `rendered` asks for: a Role has its rules.
bool HasRules(const Value& rendered, const Value& live) {
  const Value* rules = ValueAt(rendered, {"rules"});
  return rules == nullptr || (ValueAt(live, {"rules"}) != nullptr && *ValueAt(live, {"rules"}) == *rules);
}

Value RulesPatch(const Value& rendered, const Value& /*live*/) {
  return Value::MakeMap({{Value::String("rules"), *ValueAt(rendered, {"rules"})}});
}

Result<bool> IsDone(const PlanStep& /*step*/, KubernetesActionContext& context, RequestLog& log) {
  auto access = EtcdMemberAccess(context.observed_etcd());
  if (!access.ok()) return access.error();
  return context.RenderedCurrent(*access, HasRules, log);
}

Status Perform(const PlanStep& /*step*/, KubernetesActionContext& context, RequestLog& log) {
  auto access = EtcdMemberAccess(context.observed_etcd());
  if (!access.ok()) return access.error();
  return context.ApplyRendered(*access, HasRules, RulesPatch, log);
}

}  // namespace

KubernetesActionHandler ApplyEtcdMemberAccessHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = EtcdSpecAsObserved, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
