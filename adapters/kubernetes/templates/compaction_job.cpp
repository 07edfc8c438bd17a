// The Job <etcd>-compactor (etcd_templates.h).
#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/object_fields.h"
#include "adapters/kubernetes/templates/template_parts.h"

namespace ruleplane {

std::string CompactionJobName(const Value& etcd) {
  return FieldText(etcd, {"metadata", "name"}) + "-compactor";
}

Result<Value> CompactionJob(const Value& etcd, const CompactionScope& scope) {
  const std::string name = FieldText(etcd, {"metadata", "name"});
  if (ValueAt(etcd, {"spec", "backup", "store"}) == nullptr)
    return Missing(etcd, "spec.backup.store", "is not set: there is nothing to compact");
  auto store = BackupStoreAccess(etcd);
  if (!store.ok()) return store.error();
  if (store->args.empty())
    return Missing(etcd, "spec.backup.store.provider", "is not a store ruleplane compacts (Local, S3, ABS)");

  // `ruleplane compact` in the member image, where etcd-druid runs
  // etcd-backup-restore's `compact`: the restore and the new full snapshot
  // happen in the Pod's own emptyDir.
  Json args = {"compact", "--data-dir=/var/etcd/data/compaction",
               "--full-snapshot-lease=" + name + "-full-snap"};
  if (!scope.cluster_id.empty()) args.push_back("--cluster-id=" + scope.cluster_id);
  if (scope.max_revision > 0) args.push_back("--max-revision=" + std::to_string(scope.max_revision));
  for (const std::string& arg : store->args) args.push_back(arg);
  Json env = {
      {{"name", "POD_NAME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}},
      {{"name", "POD_NAMESPACE"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.namespace"}}}}}}};
  for (const Json& variable : store->env) env.push_back(variable);
  Json mounts = {{{"name", "etcd-workspace-dir"}, {"mountPath", "/var/etcd/data"}}};
  for (const Json& mount : store->mounts) mounts.push_back(mount);
  Json volumes = {{{"name", "etcd-workspace-dir"}, {"emptyDir", Json::object()}}};
  for (const Json& volume : store->volumes) volumes.push_back(volume);

  // etcd-druid's requests unless spec.backup.snapshotCompaction.resources
  // (or the older spec.backup.compactionResources) gives its own.
  Json resources = {{"requests", {{"cpu", "600m"}, {"memory", "3Gi"}}}};
  for (const Value* given : {ValueAt(etcd, {"spec", "backup", "compactionResources"}),
                             ValueAt(etcd, {"spec", "backup", "snapshotCompaction", "resources"})}) {
    if (given != nullptr && !given->is_null()) resources = ToJson(*given);
  }
  const Json labels = {
      {"name", "etcd-backup-compaction"}, {"instance", name}, {"gardener.cloud/role", "controlplane"}};
  constexpr int64_t kActiveDeadlineSeconds = 3 * 3600;  // etcd-druid's --active-deadline-duration
  return ToValue(
      Json{{"apiVersion", "batch/v1"},
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
                 {"terminationGracePeriodSeconds", 60},
                 // The members' account: it may set the full-snapshot Lease.
                 {"serviceAccountName", MemberServiceAccountName(etcd)},
                 {"restartPolicy", "Never"},
                 {"containers", Json::array({{{"name", "compact-backup"},
                                              {"image", kMemberImage},
                                              {"imagePullPolicy", "IfNotPresent"},
                                              {"command", Json::array({"ruleplane"})},
                                              {"args", args},
                                              {"env", env},
                                              {"resources", resources},
                                              {"securityContext", {{"allowPrivilegeEscalation", false}}},
                                              {"volumeMounts", mounts}}})},
                 {"volumes", volumes}}}}}}}});
}

}  // namespace ruleplane
