#include "observers/cluster_observer.h"

#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/object_fields.h"

namespace ruleplane {
namespace {

std::string Uid(const Value& object) {
  const Value* uid = ValueAt(object, {"metadata", "uid"});
  return uid != nullptr && uid->is_string() ? uid->string_value() : "";
}

// The items with an ownerReference to `owner_uid`.
Value ItemsOwnedBy(const Value::List& items, const std::string& owner_uid) {
  Value::List owned;
  for (const Value& item : items) {
    if (OwnedBy(item, owner_uid)) owned.push_back(item);
  }
  return Value::MakeList(std::move(owned));
}

Value::List Items(const Value& list) {
  const Value* items = ValueAt(list, {"items"});
  return items != nullptr && items->is_list() ? items->list_value() : Value::List{};
}

// The claims the StatefulSet's volume claim templates made for its Pods:
// <template>-<statefulset>-<ordinal>, as etcd-druid finds them
// (internal/utils/kubernetes/statefulset.go FetchPVCWarningMessagesForStatefulSet).
// A claim has no ownerReference to its StatefulSet before Kubernetes 1.27.
Value ClaimsOf(const Value& statefulset, const Value::List& claims) {
  Value::List owned;
  for (const Value& claim_template : FieldList(statefulset, {"spec", "volumeClaimTemplates"})) {
    const std::string prefix = FieldText(claim_template, {"metadata", "name"}) + "-" +
                               FieldText(statefulset, {"metadata", "name"}) + "-";
    for (const Value& claim : claims) {
      if (FieldText(claim, {"metadata", "name"}).starts_with(prefix)) owned.push_back(claim);
    }
  }
  return Value::MakeList(std::move(owned));
}

// The snapshot of these objects (null: absent). A StatefulSet of the Etcd's name counts as the Etcd's only
// when the Etcd owns it: one someone else made (or orphaned) holds their members' data and is never acted on
// (CreateStatefulSet says how to hand it over).
Result<Snapshot> Assemble(const Value& etcd, const Value& named_statefulset, const Value::List& leases,
                          const Value::List& pods, const Value::List& claims, const Value& budget,
                          const Value& compaction_job, Timestamp now) {
  const Value statefulset = OwnedBy(named_statefulset, Uid(etcd)) ? named_statefulset : Value::Null();
  Value::Map document = {{Value::String("apiVersion"), Value::String("ruleplane.dev/v1")},
                         {Value::String("kind"), Value::String("EtcdClusterSnapshot")},
                         {Value::String("observedAt"), Value::String(FormatRfc3339(now))},
                         {Value::String("etcd"), etcd}};
  if (!statefulset.is_null()) {
    document.emplace_back(Value::String("statefulSet"), statefulset);
    document.emplace_back(Value::String("persistentVolumeClaims"), ClaimsOf(statefulset, claims));
  }
  document.emplace_back(Value::String("leases"), ItemsOwnedBy(leases, Uid(etcd)));
  document.emplace_back(Value::String("pods"),
                        ItemsOwnedBy(pods, statefulset.is_null() ? "" : Uid(statefulset)));
  if (!budget.is_null()) document.emplace_back(Value::String("podDisruptionBudget"), budget);
  if (!compaction_job.is_null()) document.emplace_back(Value::String("compactionJob"), compaction_job);
  return SnapshotFromValue(Value::MakeMap(std::move(document)));
}

// The object, or null when it does not exist.
Result<Value> GetIfPresent(KubeClient& client, const KubeResource& resource, RequestLog& log) {
  auto object = client.Get(resource, log);
  if (!object.ok() && object.error().code == ErrorCode::kNotFound) return Value::Null();
  return object;
}

}  // namespace

Result<Snapshot> ObserveCluster(KubeClient& client, const std::string& namespace_name,
                                const std::string& name, Timestamp now, RequestLog& log) {
  auto etcd = client.Get({"druid.gardener.cloud/v1alpha1", "etcds", namespace_name, name, ""}, log);
  if (!etcd.ok()) return etcd.error();
  auto statefulset = GetIfPresent(client, {"apps/v1", "statefulsets", namespace_name, name, ""}, log);
  if (!statefulset.ok()) return statefulset.error();
  auto leases = client.List({"coordination.k8s.io/v1", "leases", namespace_name, "", ""}, "", log);
  if (!leases.ok()) return leases.error();
  auto pods = client.List({"v1", "pods", namespace_name, "", ""}, "", log);
  if (!pods.ok()) return pods.error();
  auto claims = client.List({"v1", "persistentvolumeclaims", namespace_name, "", ""}, "", log);
  if (!claims.ok()) return claims.error();
  // policy/v1 from Kubernetes 1.21 on; before, policy/v1beta1 (same spec.minAvailable).
  auto budget = GetIfPresent(client, {"policy/v1", "poddisruptionbudgets", namespace_name, name, ""}, log);
  if (budget.ok() && budget->is_null()) {
    budget = GetIfPresent(client, {"policy/v1beta1", "poddisruptionbudgets", namespace_name, name, ""}, log);
  }
  if (!budget.ok()) return budget.error();
  auto job = GetIfPresent(client, {"batch/v1", "jobs", namespace_name, CompactionJobName(*etcd), ""}, log);
  if (!job.ok()) return job.error();

  return Assemble(*etcd, *statefulset, Items(*leases), Items(*pods), Items(*claims), *budget, *job, now);
}

Result<Snapshot> ObserveClusterFromCache(const ObjectCache& cache, const std::string& namespace_name,
                                         const std::string& name, Timestamp now) {
  auto etcd = cache.Get("etcds", namespace_name, name);
  if (!etcd) return Error{ErrorCode::kNotFound, "etcds " + name + " in namespace " + namespace_name, {}};
  const Value statefulset = cache.Get("statefulsets", namespace_name, name).value_or(Value::Null());
  const Value::List leases = cache.ListOwnedBy("leases", namespace_name, Uid(*etcd));
  const Value::List pods =
      statefulset.is_null() ? Value::List{} : cache.ListOwnedBy("pods", namespace_name, Uid(statefulset));
  return Assemble(*etcd, statefulset, leases, pods, cache.List("persistentvolumeclaims", namespace_name),
                  cache.Get("poddisruptionbudgets", namespace_name, name).value_or(Value::Null()),
                  cache.Get("jobs", namespace_name, CompactionJobName(*etcd)).value_or(Value::Null()), now);
}

}  // namespace ruleplane
