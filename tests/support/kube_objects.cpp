#include "tests/support/kube_objects.h"

#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include "adapters/kubernetes/manifests.h"
#include "engine/common/json_value.h"
#include "engine/common/time_util.h"
#include "tests/support/source_paths.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {
namespace {

// "2024-05-01T09:59:50.876544Z" moved by whole seconds, its fraction kept as
// written (Lease times must keep their six digits); other strings as they are.
Value ShiftTimes(const Value& value, int64_t seconds) {
  if (value.is_map()) {
    Value::Map map;
    for (const auto& [key, item] : value.map_value()) map.emplace_back(key, ShiftTimes(item, seconds));
    return Value::MakeMap(std::move(map));
  }
  if (value.is_list()) {
    Value::List list;
    for (const Value& item : value.list_value()) list.push_back(ShiftTimes(item, seconds));
    return Value::MakeList(std::move(list));
  }
  if (!value.is_string()) return value;
  const std::string& text = value.string_value();
  std::tm parts{};
  if (text.size() < 20 || text[4] != '-' || text[10] != 'T' || text.back() != 'Z' ||
      strptime(text.substr(0, 19).c_str(), "%Y-%m-%dT%H:%M:%S", &parts) == nullptr) {
    return value;
  }
  const std::time_t shifted = timegm(&parts) + seconds;
  std::tm out{};
  gmtime_r(&shifted, &out);
  char whole[32];
  std::strftime(whole, sizeof whole, "%Y-%m-%dT%H:%M:%S", &out);
  return Value::String(whole + text.substr(19));
}

// The object as a client creates it: no server-set metadata, owned by `owner`
// when given, without its status.
Value ForCreate(const Value& object, const Value& owner) {
  Value::Map result;
  for (const auto& [key, item] : object.map_value()) {
    if (key.string_value() == "status") continue;
    if (key.string_value() != "metadata") {
      result.emplace_back(key, item);
      continue;
    }
    Value::Map metadata;
    for (const auto& [field, part] : item.map_value()) {
      const std::string& name = field.string_value();
      if (name == "uid" || name == "resourceVersion" || name == "creationTimestamp" || name == "generation" ||
          name == "ownerReferences" || name == "managedFields" || name == "namespace") {
        continue;
      }
      metadata.emplace_back(field, part);
    }
    if (!owner.is_null()) metadata.emplace_back(Value::String("ownerReferences"), Value::MakeList({owner}));
    result.emplace_back(key, Value::MakeMap(std::move(metadata)));
  }
  return Value::MakeMap(std::move(result));
}

Value OwnerOf(const Value& object) {
  return Value::MakeMap({{Value::String("apiVersion"), *ValueAt(object, {"apiVersion"})},
                         {Value::String("kind"), *ValueAt(object, {"kind"})},
                         {Value::String("name"), *ValueAt(object, {"metadata", "name"})},
                         {Value::String("uid"), *ValueAt(object, {"metadata", "uid"})},
                         {Value::String("controller"), Value::Bool(true)}});
}

// Pods without a service-account token (no controller manager mints one here).
Value WithoutToken(const Value& pod) {
  Value::Map result;
  for (const auto& [key, item] : pod.map_value()) {
    if (key.string_value() != "spec") {
      result.emplace_back(key, item);
      continue;
    }
    Value::Map spec;
    for (const auto& [field, part] : item.map_value()) {
      if (field.string_value() != "serviceAccountName") spec.emplace_back(field, part);
    }
    spec.emplace_back(Value::String("automountServiceAccountToken"), Value::Bool(false));
    result.emplace_back(key, Value::MakeMap(std::move(spec)));
  }
  return Value::MakeMap(std::move(result));
}

}  // namespace

std::string ExamplePath(const std::string& name) {
  return std::string(SourceDir()) + "/examples/snapshots/" + name;
}

Result<Value> LoadJsonFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error{ErrorCode::kNotFound, "cannot read " + path, {}};
  std::stringstream text;
  text << in.rdbuf();
  auto value = ParseJson(text.str());
  if (!value.ok()) return Error{value.error().code, path + ": " + value.error().message, {}};
  return value;
}

Status InstallEtcdCrd(KubeClient& admin, RequestLog& log, const std::string& namespace_name) {
  auto manifests = LoadManifests(std::string(SourceDir()) + "/deploy/etcd-crd.yaml");
  if (!manifests.ok()) return manifests.error();
  manifests->push_back(Value::MakeMap(
      {{Value::String("apiVersion"), Value::String("v1")},
       {Value::String("kind"), Value::String("ServiceAccount")},
       {Value::String("metadata"), Value::MakeMap({{Value::String("name"), Value::String("default")}})}}));
  return ApplyManifests(admin, *manifests, namespace_name, log);
}

Result<Value> CreateWithStatus(KubeClient& client, const KubeResource& collection, const Value& object,
                               const Value& owner, RequestLog& log) {
  Result<Value> created = Error{ErrorCode::kNotFound, "not tried", {}};
  for (int attempt = 0; attempt < 50; ++attempt) {  // a new CRD takes a moment to serve
    created = client.Create(collection, ForCreate(object, owner), log);
    if (created.ok() || created.error().code != ErrorCode::kNotFound) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  if (!created.ok()) return created.error();
  const Value* status = ValueAt(object, {"status"});
  if (status == nullptr) return created;
  KubeResource resource = collection;
  resource.name = ValueAt(object, {"metadata", "name"})->string_value();
  resource.subresource = "status";
  auto patched = client.MergePatch(resource, Value::MakeMap({{Value::String("status"), *status}}), log);
  if (!patched.ok()) return Error{patched.error().code, resource.name + ": " + patched.error().message, {}};
  return patched;
}

Result<Value> CreateExampleObjects(KubeClient& client, const std::string& example_path, RequestLog& log,
                                   const std::string& namespace_name) {
  auto original = LoadJsonFile(example_path);
  if (!original.ok()) return original.error();
  auto observed_at = ParseRfc3339(ValueAt(*original, {"observedAt"})->string_value());
  if (!observed_at.ok()) return observed_at.error();
  const Value snapshot = ShiftTimes(*original, std::time(nullptr) - observed_at->seconds);
  const std::string& ns = namespace_name;
  auto etcd = CreateWithStatus(client, {"druid.gardener.cloud/v1alpha1", "etcds", ns, "", ""},
                               *ValueAt(snapshot, {"etcd"}), Value::Null(), log);
  if (!etcd.ok()) return etcd.error();
  auto statefulset = CreateWithStatus(client, {"apps/v1", "statefulsets", ns, "", ""},
                                      *ValueAt(snapshot, {"statefulSet"}), OwnerOf(*etcd), log);
  if (!statefulset.ok()) return statefulset.error();
  for (const Value& lease : ValueAt(snapshot, {"leases"})->list_value()) {
    auto made = CreateWithStatus(client, {"coordination.k8s.io/v1", "leases", ns, "", ""}, lease,
                                 OwnerOf(*etcd), log);
    if (!made.ok()) return made.error();
  }
  for (const Value& pod : ValueAt(snapshot, {"pods"})->list_value()) {
    auto made =
        CreateWithStatus(client, {"v1", "pods", ns, "", ""}, WithoutToken(pod), OwnerOf(*statefulset), log);
    if (!made.ok()) return made.error();
  }
  // Kubernetes 1.20 serves PodDisruptionBudgets as policy/v1beta1 only.
  if (const Value* budget = ValueAt(snapshot, {"podDisruptionBudget"})) {
    Value::Map fields;
    for (const auto& [key, item] : budget->map_value()) {
      fields.emplace_back(key, key.string_value() == "apiVersion" ? Value::String("policy/v1beta1") : item);
    }
    auto made = CreateWithStatus(client, {"policy/v1beta1", "poddisruptionbudgets", ns, "", ""},
                                 Value::MakeMap(std::move(fields)), OwnerOf(*etcd), log);
    if (!made.ok()) return made.error();
  }
  return statefulset;
}

Value SecretOfFiles(const std::string& name, const std::vector<std::pair<std::string, std::string>>& files) {
  Value::Map data;
  for (const auto& [key, path] : files) data.emplace_back(Value::String(key), Value::String(Slurp(path)));
  return Value::MakeMap(
      {{Value::String("apiVersion"), Value::String("v1")},
       {Value::String("kind"), Value::String("Secret")},
       {Value::String("metadata"), Value::MakeMap({{Value::String("name"), Value::String(name)}})},
       {Value::String("stringData"), Value::MakeMap(std::move(data))}});
}

}  // namespace ruleplane::testing
