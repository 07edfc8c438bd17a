// scripts/node.sh's real node from a test's side (label `node`): up in the
// test's directory, commands and kubectl inside it, the test's own network
// traffic inside its network namespace, down when destroyed.
//
//   auto node = RealNode::Up(dir.path() + "/node", "node-test");
//   ASSERT_TRUE(node.ok()) << node.error().message;
//   (*node)->Kubectl("apply -f " + std::string(SourceDir()) + "/deploy/");
//   ASSERT_TRUE((*node)->EnterNetwork().ok());   // threads started from now on are inside too
//   KubeClient admin((*node)->AdminConfig());
#pragma once

#include <memory>
#include <string>

#include "adapters/kubernetes/kube_config.h"
#include "engine/common/error.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {

class RealNode {
 public:
  // `dir` must not exist yet; `name` is the node's name (and its cgroup's).
  // The error carries node.sh's output and the tails of the components' logs.
  static Result<std::unique_ptr<RealNode>> Up(const std::string& dir, const std::string& name);
  ~RealNode();  // back to the host's network namespace, then down

  const std::string& dir() const { return dir_; }
  const std::string& name() const { return name_; }

  // `command` run by sh inside the node's network and mount namespaces, in
  // the test's working directory, with kubectl on the PATH and the admin kubeconfig.
  ShellRun Exec(const std::string& command) const;
  ShellRun Kubectl(const std::string& arguments) const { return Exec("kubectl " + arguments); }

  // Moves the calling thread into the node's network namespace; threads it
  // starts afterwards are born there. The destructor moves it back.
  Status EnterNetwork();
  // The API server as the node's admin, reachable once inside the network.
  Result<KubeConfig> AdminConfig() const;

  // The host directory behind a PersistentVolumeClaim (the provisioner's hostPath).
  std::string VolumeDir(const std::string& claim, const std::string& ns = "default") const;
  // The host directory behind etcd-druid's Local backup store on this node.
  std::string BackupBucketsDir() const { return dir_ + "/backupbuckets"; }

  // The resident memory of the node: every process in its network namespace
  // (the components) or in its cgroups (the Pods' containers), in KiB.
  int64_t MemoryKiB() const;

  // kill-by-PID teardown (node.sh down); idempotent. Leaves the network first.
  ShellRun Down();
  // The node's network namespace ("net:[4026...]"), read when it came up.
  const std::string& network_namespace() const { return network_namespace_; }

 private:
  RealNode() = default;
  Status LeaveNetwork();

  std::string dir_, name_, network_namespace_;
  int host_network_fd_ = -1;  // open while the test is inside the node's network
};

}  // namespace ruleplane::testing
