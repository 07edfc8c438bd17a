// A real Kubernetes API server for tests: kube-apiserver 1.20.2 (built by
// scripts/build-kubernetes.sh into its cache, or $RULEPLANE_KUBE_BIN) on
// loopback, with its own single-member etcd, certificates, service-account
// key and token file, under RBAC; every process stopped by its PID.
//
//   auto kube = KubeCluster::Start(TempDir("kube").path());
//   ASSERT_TRUE(kube.ok()) << kube.error().message;
//   KubeClient admin((*kube)->AdminConfig());           // system:masters
//   KubeClient limited((*kube)->ConfigFor("limited"));  // a user with no bindings
//
// With `audit_log`, the API server writes an audit log (audit_log_path(),
// one JSON event per line, tests/support/audit_log.h reads it): every
// request that changes something, at level Metadata (the Lease
// ruleplane-controller at RequestResponse, for its holder), once answered. A claim
// that someone did not write is read from there, not from sleeping and looking.
//
// Ports are chosen free and closed before the process binds them (neither
// etcd 3.4 nor kube-apiserver takes an inherited socket): when one was taken
// meanwhile, the process exits saying so and starts again on new ports.
//
// With `controller_manager`, a kube-controller-manager 1.20.2 runs too
// (every controller: StatefulSets, service-account tokens, garbage
// collection, node lifecycle); Start returns once its token controller has
// created the default ServiceAccount's token Secret.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "adapters/kubernetes/kube_config.h"
#include "platform/process.h"

namespace ruleplane::testing {

struct KubeClusterOptions {
  // Users of the token file: "admin" (group system:masters) and these,
  // each with the token "<name>-token" and no group.
  std::vector<std::string> users = {"limited"};
  bool controller_manager = false;
  bool audit_log = false;
};

class KubeCluster {
 public:
  static Result<std::unique_ptr<KubeCluster>> Start(const std::string& root,
                                                    const std::vector<std::string>& users = {"limited"});
  static Result<std::unique_ptr<KubeCluster>> Start(const std::string& root,
                                                    const KubeClusterOptions& options);
  ~KubeCluster();

  const std::string& server() const { return server_; }
  // The API server's audit log; "" without `audit_log`.
  const std::string& audit_log_path() const { return audit_log_path_; }
  KubeConfig AdminConfig() const { return ConfigFor("admin"); }
  KubeConfig ConfigFor(const std::string& user) const;
  // A kubeconfig file for `user` (token auth, the server's CA), for --kubeconfig.
  std::string WriteKubeconfig(const std::string& user) const;

 private:
  KubeCluster() = default;
  Status StartControllerManager();
  Status WaitReady();  // until the API server answers the admin; an error when it exited

  std::string root_, server_, ca_file_, audit_log_path_;
  ChildProcess etcd_, apiserver_, controller_manager_;
};

// Where the kube-apiserver binary is: $RULEPLANE_KUBE_BIN, or the cache
// scripts/build-kubernetes.sh fills.
std::string KubeBinDir();

}  // namespace ruleplane::testing
