#include "adapters/kubernetes/templates/template_parts.h"

#include "adapters/kubernetes/object_fields.h"
#include "engine/common/json_value.h"

namespace ruleplane {

Json ToJson(const Value& value) { return Json::parse(FormatJson(value)); }

Result<Value> ToValue(const Json& json) { return ParseJson(json.dump()); }

Error Missing(const Value& etcd, const std::string& field, const std::string& why) {
  return Error{ErrorCode::kFailedPrecondition,
               "Etcd " + FieldText(etcd, {"metadata", "name"}) + ": " + field + " " + why,
               {}};
}

Json OwnerReference(const Value& etcd) {
  return Json{{"apiVersion", "druid.gardener.cloud/v1alpha1"},
              {"kind", "Etcd"},
              {"name", FieldText(etcd, {"metadata", "name"})},
              {"uid", FieldText(etcd, {"metadata", "uid"})},
              {"controller", true},
              {"blockOwnerDeletion", true}};
}

Value ControllerReference(const Value& etcd) {
  return Value::MakeMap({{Value::String("apiVersion"), Value::String("druid.gardener.cloud/v1alpha1")},
                         {Value::String("kind"), Value::String("Etcd")},
                         {Value::String("name"), Value::String(FieldText(etcd, {"metadata", "name"}))},
                         {Value::String("uid"), Value::String(FieldText(etcd, {"metadata", "uid"}))},
                         {Value::String("controller"), Value::Bool(true)}});
}

Result<std::string> StorageProvider(const std::string& provider) {
  static const std::pair<const char*, const char*> kNames[] = {
      {"aws", "S3"},          {"S3", "S3"},       {"azure", "ABS"},    {"ABS", "ABS"},
      {"gcp", "GCS"},         {"GCS", "GCS"},     {"alicloud", "OSS"}, {"OSS", "OSS"},
      {"openstack", "Swift"}, {"Swift", "Swift"}, {"dell", "ECS"},     {"ECS", "ECS"},
      {"openshift", "OCS"},   {"OCS", "OCS"},     {"Local", "Local"},  {"local", "Local"}};
  if (provider.empty()) return std::string();
  for (const auto& [given, name] : kNames) {
    if (provider == given) return std::string(name);
  }
  return Error{ErrorCode::kFailedPrecondition, "unsupported storage provider " + provider, {}};
}

std::string Scheme(const Value& etcd, std::string_view tls_field) {
  return ValueAt(etcd, {"spec", "etcd", tls_field}) != nullptr ? "https" : "http";
}

std::string TlsCaFile(const Value& tls_settings, const TlsSecretMount& ca) {
  return std::string(ca.path) + "/" + FieldText(tls_settings, {"tlsCASecretRef", "dataKey"}, "ca.crt");
}

Json SelectorLabels(const std::string& name) { return Json{{"name", "etcd"}, {"instance", name}}; }

Json ObjectMeta(const Value& etcd, const std::string& object_name) {
  const std::string name = FieldText(etcd, {"metadata", "name"});
  return Json{{"name", object_name},
              {"namespace", FieldText(etcd, {"metadata", "namespace"})},
              {"labels", SelectorLabels(name)},
              {"ownerReferences", Json::array({OwnerReference(etcd)})}};
}

}  // namespace ruleplane
