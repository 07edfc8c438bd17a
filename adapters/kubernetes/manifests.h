// Kubernetes manifests (deploy/*.yaml: several YAML documents per file) read
// as Values and applied through KubeClient: each object created, or, when it
// exists, merge-patched to what the file says. Cluster-scoped kinds are
// known by name; every other object goes to `namespace_name` unless it names
// its own.
#pragma once

#include <string>
#include <vector>

#include "adapters/kubernetes/kube_client.h"

namespace ruleplane {

// Every non-empty document of the file. kParse naming the file and line.
Result<std::vector<Value>> LoadManifests(const std::string& path);

// The resource an object of this apiVersion and kind is (plural, scope).
Result<KubeResource> ResourceOf(const Value& object, const std::string& namespace_name);

// Creates or updates each object; the first failure stops and names the object.
Status ApplyManifests(KubeClient& client, const std::vector<Value>& objects,
                      const std::string& namespace_name, RequestLog& log);

}  // namespace ruleplane
