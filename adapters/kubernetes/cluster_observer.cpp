#include "adapters/kubernetes/cluster_observer.h"

namespace ruleplane {
namespace {

const Value* Path(const Value& object, std::initializer_list<std::string_view> keys) {
  const Value* at = &object;
  for (std::string_view key : keys) {
    if (!at->is_map() || (at = at->Find(key)) == nullptr) return nullptr;
  }
  return at;
}

std::string Uid(const Value& object) {
  const Value* uid = Path(object, {"metadata", "uid"});
  return uid != nullptr && uid->is_string() ? uid->string_value() : "";
}

// The items of `list` with an ownerReference to `owner_uid`.
Value OwnedBy(const Value& list, const std::string& owner_uid) {
  Value::List owned;
  const Value* items = Path(list, {"items"});
  if (items == nullptr || !items->is_list() || owner_uid.empty()) return Value::MakeList(std::move(owned));
  for (const Value& item : items->list_value()) {
    const Value* owners = Path(item, {"metadata", "ownerReferences"});
    if (owners == nullptr || !owners->is_list()) continue;
    for (const Value& owner : owners->list_value()) {
      const Value* uid = Path(owner, {"uid"});
      if (uid != nullptr && uid->is_string() && uid->string_value() == owner_uid) {
        owned.push_back(item);
        break;
      }
    }
  }
  return Value::MakeList(std::move(owned));
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
  // policy/v1 from Kubernetes 1.21 on; before, policy/v1beta1 (same spec.minAvailable).
  auto budget = GetIfPresent(client, {"policy/v1", "poddisruptionbudgets", namespace_name, name, ""}, log);
  if (budget.ok() && budget->is_null()) {
    budget = GetIfPresent(client, {"policy/v1beta1", "poddisruptionbudgets", namespace_name, name, ""}, log);
  }
  if (!budget.ok()) return budget.error();

  Value::Map document = {{Value::String("apiVersion"), Value::String("ruleplane.dev/v1")},
                         {Value::String("kind"), Value::String("EtcdClusterSnapshot")},
                         {Value::String("observedAt"), Value::String(FormatRfc3339(now))},
                         {Value::String("etcd"), *etcd}};
  if (!statefulset->is_null()) document.emplace_back(Value::String("statefulSet"), *statefulset);
  document.emplace_back(Value::String("leases"), OwnedBy(*leases, Uid(*etcd)));
  document.emplace_back(Value::String("pods"),
                        OwnedBy(*pods, statefulset->is_null() ? "" : Uid(*statefulset)));
  if (!budget->is_null()) document.emplace_back(Value::String("podDisruptionBudget"), *budget);
  return SnapshotFromValue(Value::MakeMap(std::move(document)));
}

}  // namespace ruleplane
