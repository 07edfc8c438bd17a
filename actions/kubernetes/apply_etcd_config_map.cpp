// ApplyEtcdConfigMap: etcd-bootstrap-<uid[:6]> rendered from the Etcd's spec
// for the step's replicas, created, or updated fenced by its resourceVersion
// as read just before; done when its data is what the spec renders (a spec
// change such as peerUrlTls reaches it, not only a new size).
#include "actions/kubernetes/kubernetes_action_handler.h"
#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/object_fields.h"

namespace ruleplane {
namespace {

bool HasData(const Value& rendered, const Value& live) {
  const Value* data = ValueAt(live, {"data"});
  return data != nullptr && *data == *ValueAt(rendered, {"data"});
}

Value DataPatch(const Value& rendered, const Value& /*live*/) {
  return Value::MakeMap({{Value::String("data"), *ValueAt(rendered, {"data"})}});
}

Result<Value::List> Rendered(const PlanStep& step, KubernetesActionContext& context) {
  auto config_map = EtcdConfigMap(context.observed_etcd(), IntParam(step, "replicas"));
  if (!config_map.ok()) return config_map.error();
  return Value::List{*std::move(config_map)};
}

Result<bool> IsDone(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  auto rendered = Rendered(step, context);
  if (!rendered.ok()) return rendered.error();
  return context.RenderedCurrent(*rendered, HasData, log);
}

Status Perform(const PlanStep& step, KubernetesActionContext& context, RequestLog& log) {
  auto rendered = Rendered(step, context);
  if (!rendered.ok()) return rendered.error();
  return context.ApplyRendered(*rendered, HasData, DataPatch, log);
}

}  // namespace

KubernetesActionHandler ApplyEtcdConfigMapHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = EtcdSpecAsObserved, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
