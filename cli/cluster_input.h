// Reading an etcd cluster's snapshot from a live Kubernetes API server, for
// `observe cluster` and `plan --cluster`: which API server (--kubeconfig,
// $KUBECONFIG, ~/.kube/config, or in a Pod its service account) and which
// Etcd ("NS/NAME", or NAME in the context's namespace). Reads only.
#pragma once

#include <string>

#include "adapters/kubernetes/kube_config.h"
#include "cli/commands.h"
#include "engine/common/snapshot.h"

namespace ruleplane::cli {

struct ClusterSource {
  std::string kubeconfig;      // "" = $KUBECONFIG, ~/.kube/config, then in-cluster
  std::string context;         // "" = the current context
  std::string cluster;         // "NS/NAME" or "NAME"
  std::string namespace_name;  // -n, when `cluster` names no namespace
};

Result<KubeConfig> ResolveKubeConfig(const std::string& kubeconfig, const std::string& context);
Result<Snapshot> ObserveClusterSnapshot(const ClusterSource& source);

int RunObserveCluster(const Args& args, std::ostream& out, std::ostream& err);

}  // namespace ruleplane::cli
