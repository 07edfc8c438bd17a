// ApplyEtcdConfigMap: etcd-bootstrap-<uid[:6]> rendered from the Etcd's spec
// for the step's replicas, created, or updated fenced by its resourceVersion
// as read just before; done when its data is what the spec renders (a spec
// change such as peerUrlTls reaches it, not only a new size).
#include "adapters/kubernetes/action_handler.h"
#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/object_fields.h"

namespace ruleplane {
namespace {

KubeResource ConfigMap(ActionContext& context) {
  return {"v1", "configmaps", context.namespace_name(), EtcdConfigMapName(context.observed_etcd()), ""};
}

Result<bool> IsDone(const PlanStep& step, ActionContext& context, RequestLog& log) {
  auto config_map = context.client().Get(ConfigMap(context), log);
  if (!config_map.ok() && config_map.error().code != ErrorCode::kNotFound) return config_map.error();
  if (!config_map.ok()) return false;
  auto rendered = EtcdConfigMap(context.observed_etcd(), IntParam(step, "replicas"));
  if (!rendered.ok()) return rendered.error();
  const Value* data = ValueAt(*config_map, {"data"});
  return data != nullptr && *data == *ValueAt(*rendered, {"data"});
}

Status Perform(const PlanStep& step, ActionContext& context, RequestLog& log) {
  auto rendered = EtcdConfigMap(context.observed_etcd(), IntParam(step, "replicas"));
  if (!rendered.ok()) return rendered.error();
  const KubeResource config_map = ConfigMap(context);
  auto current = context.client().Get(config_map, log);
  if (!current.ok() && current.error().code != ErrorCode::kNotFound) return current.error();
  Result<Value> written =
      current.ok()
          ? context.client().MergePatch(config_map,
                                        FencedMergePatch(FieldText(*current, {"metadata", "resourceVersion"}),
                                                         "data", *ValueAt(*rendered, {"data"})),
                                        log)
          : context.client().Create({"v1", "configmaps", context.namespace_name(), "", ""}, *rendered, log);
  if (!written.ok()) return written.error();
  return {};
}

}  // namespace

ActionHandler ApplyEtcdConfigMapHandler() {
  return {.is_done = IsDone, .perform = Perform, .fenced_by_etcd_spec = true, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
