// ApplyEtcdServices: <etcd>-client and <etcd>-peer, each created when
// missing; the client Service's labels and annotations from
// spec.etcd.clientService, patched onto it when it lacks one or has another
// value. A key the spec no longer names is taken off when the Service records
// it as the spec's (kClientServiceKeysAnnotation); others' labels and
// annotations stay.
#include "adapters/kubernetes/action_handler.h"
#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/object_fields.h"
#include "engine/common/json_value.h"

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

// The keys of `field` (labels, annotations) that `live` records as the
// spec's and `rendered` no longer has.
std::vector<std::string> DroppedKeys(const Value& live, const Value& rendered, const std::string& field) {
  auto recorded = ParseJson(FieldText(live, {"metadata", "annotations", kClientServiceKeysAnnotation}));
  std::vector<std::string> dropped;
  if (!recorded.ok()) return dropped;
  for (const Value& key : FieldList(*recorded, {field})) {
    if (key.is_string() && ValueAt(rendered, {"metadata", field, key.string_value()}) == nullptr)
      dropped.push_back(key.string_value());
  }
  return dropped;
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
      Value entries = Value::MakeMap({});
      if (const Value* wanted = ValueAt(rendered, {"metadata", field})) entries = *wanted;
      for (const std::string& dropped : DroppedKeys(*live, rendered, field))
        entries = WithField(entries, dropped, Value::Null());
      metadata.emplace_back(Value::String(field), std::move(entries));
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
