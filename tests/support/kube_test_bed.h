// The start of every test against a real API server: kube-apiserver (with
// kube-controller-manager and an audit log when asked), the Etcd CRD (served
// once Start returns), the
// shipped RBAC (deploy/rbac.yaml) with users bound to its Roles, and
// `ruleplane controller` processes started with given flags as a given user.
//
//   auto bed = KubeTestBed::Start(dir.path(), {.bindings = {{"operator", "ruleplane"}},
//                                              .example = "scale-up.json"});
//   ASSERT_TRUE(bed.ok()) << bed.error().message;
//   auto controller = (*bed)->StartController({.user = "operator", .flags = {"--allow-disruptive"}});
//   ASSERT_TRUE(controller.ok()) << controller.error().message;
//   ... Slurp(controller->log), "http://127.0.0.1:" + std::to_string(controller->metrics_port) ...
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "adapters/kubernetes/kube_client.h"
#include "platform/process.h"
#include "tests/support/kube_cluster.h"

namespace ruleplane::testing {

struct KubeTestBedOptions {
  KubeClusterOptions cluster = {};  // token users, kube-controller-manager, audit log
  // {user, Role}: deploy/rbac.yaml applied and each user bound to that Role
  // of it ("ruleplane") and to nothing else.
  std::vector<std::pair<std::string, std::string>> bindings = {};
  // An example snapshot (examples/snapshots/<example>) created as real
  // objects in "default" (CreateExampleObjects); none when "".
  std::string example = "";
};

// How a `ruleplane controller` is started: as `user` (a kubeconfig of its
// token), in `namespace_name` ("" adds no -n: give --all-namespaces in
// `flags`), journal `journal` (default <root>/journal-<name>.db), log
// <root>/<name>.log, metrics on a free loopback port, then `flags`.
struct ControllerOptions {
  std::string name = "controller";
  std::string user = "admin";
  std::string namespace_name = "default";
  std::string journal = "";
  std::vector<std::string> flags = {};
  std::vector<std::string> environment = {};  // "NAME=value", e.g. RULEPLANE_FAILPOINT
};

struct RunningController {
  ChildProcess process;
  std::string log;  // its stdout and stderr
  int metrics_port = 0;
};

class KubeTestBed {
 public:
  // Everything under `root`; the API server's own files under <root>/kube.
  static Result<std::unique_ptr<KubeTestBed>> Start(const std::string& root,
                                                    const KubeTestBedOptions& options = {});

  const std::string& root() const { return root_; }
  KubeCluster& kube() { return *kube_; }
  KubeClient& admin() { return *admin_; }
  RequestLog& log() { return log_; }

  // deploy/rbac.yaml applied (again) and `user` bound to its Role `role`,
  // once the authorizer lets `user` read Etcds.
  Status BindToShippedRole(const std::string& user, const std::string& role = "ruleplane");
  // The members' ServiceAccount, Role and RoleBinding that the controller
  // creates for the Etcd etcd-main (EtcdMemberAccess, from the Etcd as the
  // API server has it), and `user` bound to that Role alone, once the
  // authorizer lets `user` read the Etcd.
  Status BindToMemberRole(const std::string& user);
  Result<RunningController> StartController(const ControllerOptions& options) const;

 private:
  KubeTestBed() = default;
  Status AwaitBound(const std::string& user);
  std::string root_;
  std::unique_ptr<KubeCluster> kube_;
  std::unique_ptr<KubeClient> admin_;
  RequestLog log_;
};

// `ruleplane controller` as `options` says, against `kube`, its files under `root`.
Result<RunningController> StartControllerProcess(const KubeCluster& kube, const std::string& root,
                                                 const ControllerOptions& options);

}  // namespace ruleplane::testing
