// ApplyEtcdServices: <etcd>-client and <etcd>-peer, each created when
// missing; the client Service's labels and annotations from
// spec.etcd.clientService, patched onto it when it lacks one or has another
// value. A key the spec no longer names is taken off when the Service records
// it as the spec's (kClientServiceKeysAnnotation); others' labels and
// annotations stay.
#include "actions/kubernetes/kubernetes_action_handler.h"
#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/object_fields.h"
#include "engine/common/json_value.h"

namespace ruleplane {
namespace {

constexpr const char* kMetadataFields[] = {"labels", "annotations"};

// Whether `live` has each label and annotation of `rendered` with its value.
bool CarriesMetadata(const Value& rendered, const Value& live) {
  for (const char* field : kMetadataFields) {
    const Value* wanted = ValueAt(rendered, {"metadata", field});
    if (wanted == nullptr || !wanted->is_map()) continue;
    for (const auto& [key, value] : wanted->map_value()) {
      const Value* has = ValueAt(live, {"metadata", field, key.string_value()});
      if (has == nullptr || *has != value) return false;
    }
  }
  return true;
}

// The keys of `field` (labels, annotations) that `live` records as the
// spec's and `rendered` no longer has.
std::vector<std::string> DroppedKeys(const Value& rendered, const Value& live, const std::string& field) {
  auto recorded = ParseJson(FieldText(live, {"metadata", "annotations", kClientServiceKeysAnnotation}));
  std::vector<std::string> dropped;
  if (!recorded.ok()) return dropped;
  for (const Value& key : FieldList(*recorded, {field})) {
    if (key.is_string() && ValueAt(rendered, {"metadata", field, key.string_value()}) == nullptr)
      dropped.push_back(key.string_value());
  }
  return dropped;
}

// The rendered labels and annotations, and the dropped ones named null.
Value MetadataPatch(const Value& rendered, const Value& live) {
  Value::Map metadata;
  for (const char* field : kMetadataFields) {
    Value entries = Value::MakeMap({});
    if (const Value* wanted = ValueAt(rendered, {"metadata", field})) entries = *wanted;
    for (const std::string& dropped : DroppedKeys(rendered, live, field))
      entries = WithField(entries, dropped, Value::Null());
    metadata.emplace_back(Value::String(field), std::move(entries));
  }
  return Value::MakeMap({{Value::String("metadata"), Value::MakeMap(std::move(metadata))}});
}

Result<bool> IsDone(const PlanStep& /*step*/, KubernetesActionContext& context, RequestLog& log) {
  auto services = EtcdServices(context.observed_etcd());
  if (!services.ok()) return services.error();
  return context.RenderedCurrent(*services, CarriesMetadata, log);
}

Status Perform(const PlanStep& /*step*/, KubernetesActionContext& context, RequestLog& log) {
  auto services = EtcdServices(context.observed_etcd());
  if (!services.ok()) return services.error();
  return context.ApplyRendered(*services, CarriesMetadata, MetadataPatch, log);
}

}  // namespace

KubernetesActionHandler ApplyEtcdServicesHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = EtcdSpecAsObserved, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
