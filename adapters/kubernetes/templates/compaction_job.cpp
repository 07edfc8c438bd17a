// The Job <etcd>-compactor (etcd_templates.h).
#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/object_fields.h"
#include "adapters/kubernetes/templates/template_parts.h"

namespace ruleplane {

std::string CompactionJobName(const Value& etcd) {
  return FieldText(etcd, {"metadata", "name"}) + "-compactor";
}

Result<Value> CompactionJob(const Value& etcd) {
  const std::string name = FieldText(etcd, {"metadata", "name"});
  const Value* store = ValueAt(etcd, {"spec", "backup", "store"});
  if (store == nullptr) return Missing(etcd, "spec.backup.store", "is not set: there is nothing to compact");
  // etcd-druid falls back to its own image list; ruleplane ships none.
  const std::string image = FieldText(etcd, {"spec", "backup", "image"});
  if (image.empty())
    return Missing(etcd, "spec.backup.image", "is not set: the compaction job needs an image");
  auto provider = StorageProvider(FieldText(*store, {"provider"}));
  if (!provider.ok()) return Missing(etcd, "spec.backup.store.provider", provider.error().message);
  auto quota = QuantityBytes(FieldText(etcd, {"spec", "etcd", "quota"}, "8Gi"));
  if (!quota.ok()) return Missing(etcd, "spec.etcd.quota", quota.error().message);
  const std::string container = FieldText(*store, {"container"});
  const std::string secret = FieldText(*store, {"secretRef", "name"});

  Json args = {"compact",
               "--data-dir=/var/etcd/data/compaction.etcd",
               "--restoration-temp-snapshots-dir=/var/etcd/data/compaction.restoration.temp",
               "--snapstore-temp-directory=/var/etcd/data/tmp",
               "--metrics-scrape-wait-duration=0s",
               "--enable-snapshot-lease-renewal=true",
               "--full-snapshot-lease-name=" + name + "-full-snap",
               "--delta-snapshot-lease-name=" + name + "-delta-snap",
               "--embedded-etcd-quota-bytes=" + std::to_string(*quota)};
  if (!provider->empty()) args.push_back("--storage-provider=" + *provider);
  if (!FieldText(*store, {"prefix"}).empty())
    args.push_back("--store-prefix=" + FieldText(*store, {"prefix"}));
  if (!container.empty()) args.push_back("--store-container=" + container);

  Json env = {
      {{"name", "POD_NAME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}},
      {{"name", "POD_NAMESPACE"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.namespace"}}}}}},
      {{"name", "STORAGE_CONTAINER"}, {"value", container}}};
  Json mounts = {{{"name", "etcd-workspace-dir"}, {"mountPath", "/var/etcd/data"}}};
  Json volumes = {{{"name", "etcd-workspace-dir"}, {"emptyDir", Json::object()}}};
  if (*provider == "Local") {
    volumes.push_back(
        {{"name", "host-storage"},
         {"hostPath", {{"path", "/etc/gardener/local-backupbuckets/" + container}, {"type", "Directory"}}}});
    mounts.push_back({{"name", "host-storage"}, {"mountPath", container}});
  } else if (!provider->empty()) {
    if (secret.empty()) return Missing(etcd, "spec.backup.store.secretRef", "is not set for " + *provider);
    const bool gcs = *provider == "GCS";
    static const std::pair<const char*, const char*> kCredentials[] = {
        {"S3", "AWS_APPLICATION_CREDENTIALS"},
        {"ABS", "AZURE_APPLICATION_CREDENTIALS"},
        {"Swift", "OPENSTACK_APPLICATION_CREDENTIALS"},
        {"OSS", "ALICLOUD_APPLICATION_CREDENTIALS"},
        {"OCS", "OPENSHIFT_APPLICATION_CREDENTIALS"}};
    for (const auto& [for_provider, variable] : kCredentials) {
      if (*provider == for_provider) env.push_back({{"name", variable}, {"value", "/var/etcd-backup"}});
    }
    if (gcs) {
      env.push_back({{"name", "GOOGLE_APPLICATION_CREDENTIALS"}, {"value", "/var/.gcp/serviceaccount.json"}});
    }
    volumes.push_back({{"name", "etcd-backup"}, {"secret", {{"secretName", secret}}}});
    mounts.push_back({{"name", "etcd-backup"}, {"mountPath", gcs ? "/var/.gcp/" : "/var/etcd-backup/"}});
  }
  Json resources = {{"requests", {{"cpu", "600m"}, {"memory", "3Gi"}}}};
  if (const Value* given = ValueAt(etcd, {"spec", "backup", "compactionResources"}))
    resources = ToJson(*given);
  const Json labels = {
      {"name", "etcd-backup-compaction"}, {"instance", name}, {"gardener.cloud/role", "controlplane"}};
  constexpr int64_t kActiveDeadlineSeconds = 3 * 3600;  // etcd-druid's --active-deadline-duration
  return ToValue(Json{{"apiVersion", "batch/v1"},
                      {"kind", "Job"},
                      {"metadata",
                       {{"name", CompactionJobName(etcd)},
                        {"namespace", FieldText(etcd, {"metadata", "namespace"})},
                        {"labels", labels},
                        {"ownerReferences", Json::array({OwnerReference(etcd)})}}},
                      {"spec",
                       {{"activeDeadlineSeconds", kActiveDeadlineSeconds},
                        {"completions", 1},
                        {"backoffLimit", 0},
                        {"template",
                         {{"metadata", {{"labels", labels}}},
                          {"spec",
                           {{"activeDeadlineSeconds", kActiveDeadlineSeconds},
                            {"serviceAccountName", name},
                            {"restartPolicy", "Never"},
                            {"containers", Json::array({{{"name", "compact-backup"},
                                                         {"image", image},
                                                         {"imagePullPolicy", "IfNotPresent"},
                                                         {"args", args},
                                                         {"env", env},
                                                         {"resources", resources},
                                                         {"volumeMounts", mounts}}})},
                            {"volumes", volumes}}}}}}}});
}

}  // namespace ruleplane
