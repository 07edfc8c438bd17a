// The objects of an example snapshot (examples/snapshots) created for real in
// a test's kube-apiserver: the Etcd, its StatefulSet, leases, pods and budget,
// with owner references and statuses, every time shifted so that the
// example's observedAt is now.
//
//   KubeClient admin(kube->AdminConfig());
//   ASSERT_TRUE(InstallEtcdCrd(admin, log).ok());
//   auto statefulset = CreateExampleObjects(admin, ExamplePath("minority-not-ready.json"), log);
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "adapters/kubernetes/kube_client.h"

namespace ruleplane::testing {

// examples/snapshots/<name> in the source tree.
std::string ExamplePath(const std::string& name);

// A JSON file's content; the error names the file.
Result<Value> LoadJsonFile(const std::string& path);

// deploy/etcd-crd.yaml, and the namespace's default ServiceAccount (which pod
// admission looks up; no controller manager creates it here).
Status InstallEtcdCrd(KubeClient& admin, RequestLog& log, const std::string& namespace_name = "default");

// Creates `object` as a client would (no server-set metadata, no status),
// owned by `owner` unless it is null, then writes its status through
// /status; returns what the server stored. Retries while a new CRD is not
// served yet.
Result<Value> CreateWithStatus(KubeClient& client, const KubeResource& collection, const Value& object,
                               const Value& owner, RequestLog& log);

// Every object of the example snapshot in `namespace_name`; returns the
// StatefulSet as stored.
Result<Value> CreateExampleObjects(KubeClient& client, const std::string& example_path, RequestLog& log,
                                   const std::string& namespace_name = "default");

// A Secret named `name` whose keys hold these files' text (stringData).
Value SecretOfFiles(const std::string& name, const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace ruleplane::testing
