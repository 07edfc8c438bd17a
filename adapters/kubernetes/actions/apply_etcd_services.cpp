// ApplyEtcdServices: <etcd>-client and <etcd>-peer, each created when
// missing; the client Service's labels and annotations from
// spec.etcd.clientService, patched onto it when it lacks one or has another
// value (what the spec no longer names is left: others annotate Services too).
#include "adapters/kubernetes/action_handler.h"
#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/object_fields.h"

namespace ruleplane {
namespace {

KubeResource ServiceNamed(ActionContext& context, const std::string& name) {
  return {"v1", "services", context.namespace_name(), name, ""};
}

// Whether `service` has each label and annotation of `rendered` with its value.
bool CarriesMetadataOf(const Value& service, const Value& rendered) {
  for (const char* field : {"labels", "annotations"}) {
    const Value* wanted = ValueAt(rendered, {"metadata", field});
    if (wanted == nullptr || !wanted->is_map()) continue;
    for (const auto& [key, value] : wanted->map_value()) {
      const Value* has = ValueAt(service, {"metadata", field, key.string_value()});
      if (has == nullptr || *has != value) return false;
    }
  }
  return true;
}

// Each Service rendered, with the live one when it exists (nullopt when not).
Result<std::vector<std::pair<Value, std::optional<Value>>>> RenderedAndLive(ActionContext& context,
                                                                            RequestLog& log) {
  auto services = EtcdServices(context.observed_etcd());
  if (!services.ok()) return services.error();
  std::vector<std::pair<Value, std::optional<Value>>> pairs;
  for (const Value& rendered : *services) {
    auto live = context.Find(ServiceNamed(context, FieldText(rendered, {"metadata", "name"})), log);
    if (!live.ok()) return live.error();
    pairs.emplace_back(rendered, *std::move(live));
  }
  return pairs;
}

Result<bool> IsDone(const PlanStep& /*step*/, ActionContext& context, RequestLog& log) {
  auto services = RenderedAndLive(context, log);
  if (!services.ok()) return services.error();
  for (const auto& [rendered, live] : *services) {
    if (!live || !CarriesMetadataOf(*live, rendered)) return false;
  }
  return true;
}

Status Perform(const PlanStep& /*step*/, ActionContext& context, RequestLog& log) {
  auto services = RenderedAndLive(context, log);
  if (!services.ok()) return services.error();
  for (const auto& [rendered, live] : *services) {
    if (!live) {
      if (Status created = context.CreateUnlessPresent(ServiceNamed(context, ""), rendered, log);
          !created.ok())
        return created;
      continue;
    }
    if (CarriesMetadataOf(*live, rendered)) continue;
    // Fenced by the resourceVersion just read: a Service changed since is read again.
    Value::Map metadata = {
        {Value::String("resourceVersion"), Value::String(FieldText(*live, {"metadata", "resourceVersion"}))}};
    for (const char* field : {"labels", "annotations"}) {
      if (const Value* wanted = ValueAt(rendered, {"metadata", field}))
        metadata.emplace_back(Value::String(field), *wanted);
    }
    auto patched = context.client().MergePatch(
        ServiceNamed(context, FieldText(rendered, {"metadata", "name"})),
        Value::MakeMap({{Value::String("metadata"), Value::MakeMap(std::move(metadata))}}), log);
    if (!patched.ok()) return patched.error();
  }
  return {};
}

}  // namespace

ActionHandler ApplyEtcdServicesHandler() {
  return {.is_done = IsDone, .perform = Perform, .fenced_by_etcd_spec = true, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
