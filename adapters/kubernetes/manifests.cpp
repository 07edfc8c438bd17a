#include "adapters/kubernetes/manifests.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <map>

#include "engine/rule_file/yaml_value.h"

namespace ruleplane {
namespace {

std::string Field(const Value& map, std::string_view key) {
  const Value* value = map.is_map() ? map.Find(key) : nullptr;
  return value != nullptr && value->is_string() ? value->string_value() : "";
}

}  // namespace

Result<std::vector<Value>> LoadManifests(const std::string& path) {
  std::vector<Value> objects;
  try {
    YamlExpansion expansion;
    for (const YAML::Node& document : YAML::LoadAllFromFile(path)) {
      if (document.IsNull()) continue;
      auto value = YamlToValue(document, path, expansion);
      if (!value.ok()) return value.error();
      objects.push_back(std::move(*value));
    }
  } catch (const YAML::Exception& error) {
    return Error{ErrorCode::kParse, path + ": " + error.what(), {}};
  }
  return objects;
}

Result<KubeResource> ResourceOf(const Value& object, const std::string& namespace_name) {
  // Kinds ruleplane's manifests use; cluster-scoped ones are marked.
  static const std::map<std::string, std::pair<std::string, bool>> kKinds = {
      {"CustomResourceDefinition", {"customresourcedefinitions", true}},
      {"ClusterRole", {"clusterroles", true}},
      {"ClusterRoleBinding", {"clusterrolebindings", true}},
      {"Namespace", {"namespaces", true}},
      {"ServiceAccount", {"serviceaccounts", false}},
      {"Role", {"roles", false}},
      {"RoleBinding", {"rolebindings", false}},
      {"Deployment", {"deployments", false}},
      {"StatefulSet", {"statefulsets", false}},
      {"Service", {"services", false}},
      {"ConfigMap", {"configmaps", false}},
      {"Secret", {"secrets", false}},
      {"Lease", {"leases", false}},
      {"PodDisruptionBudget", {"poddisruptionbudgets", false}},
      {"NetworkPolicy", {"networkpolicies", false}},
      {"Etcd", {"etcds", false}},
  };
  const std::string kind = Field(object, "kind"), api_version = Field(object, "apiVersion");
  const Value* metadata = object.is_map() ? object.Find("metadata") : nullptr;
  const std::string name = metadata != nullptr ? Field(*metadata, "name") : "";
  auto known = kKinds.find(kind);
  if (known == kKinds.end() || api_version.empty() || name.empty()) {
    return Error{ErrorCode::kInvalidArgument,
                 "cannot apply " + (kind.empty() ? std::string("an object without a kind") : kind) +
                     (name.empty() ? " without metadata.name" : " " + name) +
                     (known == kKinds.end() && !kind.empty() ? ": an unknown kind" : ""),
                 {}};
  }
  const std::string own_namespace = metadata != nullptr ? Field(*metadata, "namespace") : "";
  return KubeResource{api_version, known->second.first,
                      known->second.second ? "" : (own_namespace.empty() ? namespace_name : own_namespace),
                      name, ""};
}

Status ApplyManifests(KubeClient& client, const std::vector<Value>& objects,
                      const std::string& namespace_name, RequestLog& log) {
  for (const Value& object : objects) {
    auto resource = ResourceOf(object, namespace_name);
    if (!resource.ok()) return resource.error();
    KubeResource collection = *resource;
    collection.name.clear();
    auto created = client.Create(collection, object, log);
    if (created.ok()) continue;
    if (created.error().code != ErrorCode::kConflict) return created.error();
    // 409 AlreadyExists: bring it to what the file says.
    auto patched = client.MergePatch(*resource, object, log);
    if (!patched.ok()) return patched.error();
  }
  return {};
}

}  // namespace ruleplane
