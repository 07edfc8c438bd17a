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

Result<StoreAccess> BackupStoreAccess(const Value& etcd) {
  const std::string name = FieldText(etcd, {"metadata", "name"});
  const Value* store = ValueAt(etcd, {"spec", "backup", "store"});
  auto provider = StorageProvider(store != nullptr ? FieldText(*store, {"provider"}) : "");
  const std::string prefix = store != nullptr ? FieldText(*store, {"prefix"}, name) : name;
  StoreAccess access;
  if (provider.ok() && *provider == "Local") {
    const std::string container = FieldText(*store, {"container"}, name);
    access.volumes.push_back(
        {{"name", "backup-store"},
         {"hostPath",
          {{"path", "/etc/gardener/local-backupbuckets/" + container}, {"type", "DirectoryOrCreate"}}}});
    access.mounts.push_back({{"name", "backup-store"}, {"mountPath", "/var/etcd/backup"}});
    access.args = {"--backup-store=/var/etcd/backup/" + prefix};
  } else if (provider.ok() && (*provider == "S3" || *provider == "ABS")) {
    const std::string secret = FieldText(*store, {"secretRef", "name"});
    if (secret.empty()) return Missing(etcd, "spec.backup.store.secretRef.name", "is not set");
    access.volumes.push_back(
        {{"name", "etcd-backup-secret"}, {"secret", {{"secretName", secret}, {"defaultMode", 0640}}}});
    access.mounts.push_back(
        {{"name", "etcd-backup-secret"}, {"mountPath", "/var/etcd-backup"}, {"readOnly", true}});
    access.env.push_back(
        {{"name", *provider == "S3" ? "AWS_APPLICATION_CREDENTIALS" : "AZURE_APPLICATION_CREDENTIALS"},
         {"value", "/var/etcd-backup"}});
    access.env.push_back({{"name", "STORAGE_CONTAINER"}, {"value", FieldText(*store, {"container"})}});
    access.args = {"--storage-provider=" + *provider, "--store-prefix=" + prefix,
                   // etcd-druid's: snapshots wait on the data volume, not in the container's /tmp.
                   "--snapstore-temp-directory=/var/etcd/data/temp"};
    if (const std::string endpoint = FieldText(*store, {"endpointOverride"}); !endpoint.empty())
      access.args.push_back("--store-endpoint-override=" + endpoint);
  }
  return access;
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
