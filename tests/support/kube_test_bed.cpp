#include "tests/support/kube_test_bed.h"

#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/manifests.h"
#include "platform/http_client.h"
#include "tests/support/kube_objects.h"
#include "tests/support/source_paths.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {

Result<std::unique_ptr<KubeTestBed>> KubeTestBed::Start(const std::string& root,
                                                        const KubeTestBedOptions& options) {
  std::unique_ptr<KubeTestBed> bed(new KubeTestBed());
  bed->root_ = root;
  auto kube = KubeCluster::Start(root + "/kube", options.cluster);
  if (!kube.ok()) return kube.error();
  bed->kube_ = std::move(*kube);
  bed->admin_ = std::make_unique<KubeClient>(bed->kube_->AdminConfig());
  if (Status installed = InstallEtcdCrd(*bed->admin_, bed->log_); !installed.ok()) return installed.error();
  // Established within a second here; until then Etcds are not served (404).
  if (!Eventually(
          [&] {
            RequestLog reads;
            return bed->admin_->List({"druid.gardener.cloud/v1alpha1", "etcds", "default", "", ""}, "", reads)
                .ok();
          },
          std::chrono::seconds(10)))
    return Error{ErrorCode::kUnavailable, "the Etcd CRD was not established", {}};
  for (const auto& [user, role] : options.bindings) {
    if (Status bound = bed->BindToShippedRole(user, role); !bound.ok()) return bound.error();
  }
  if (!options.example.empty()) {
    auto created = CreateExampleObjects(*bed->admin_, ExamplePath(options.example), bed->log_);
    if (!created.ok())
      return Error{created.error().code, options.example + ": " + created.error().message, {}};
  }
  return bed;
}

Status KubeTestBed::BindToShippedRole(const std::string& user, const std::string& role) {
  auto rbac = LoadManifests(std::string(SourceDir()) + "/deploy/rbac.yaml");
  if (!rbac.ok()) return rbac.error();
  rbac->push_back(RoleBinding(user, role, role + "-" + user));
  if (Status applied = ApplyManifests(*admin_, *rbac, "default", log_); !applied.ok()) return applied;
  return AwaitBound(user);
}

Status KubeTestBed::BindToMemberRole(const std::string& user) {
  auto etcd = admin_->Get({"druid.gardener.cloud/v1alpha1", "etcds", "default", "etcd-main", ""}, log_);
  if (!etcd.ok()) return etcd.error();
  auto access = EtcdMemberAccess(*etcd);
  if (!access.ok()) return access.error();
  access->push_back(RoleBinding(user, MemberRoleName(*etcd), "member-" + user));
  if (Status applied = ApplyManifests(*admin_, *access, "default", log_); !applied.ok()) return applied;
  return AwaitBound(user);
}

Status KubeTestBed::AwaitBound(const std::string& user) {
  // Until the authorizer sees the binding: a 404 (or the object) instead of a 403.
  KubeClient bound(kube_->ConfigFor(user));
  const bool allowed = Eventually(
      [&] {
        RequestLog reads;
        auto etcd = bound.Get({"druid.gardener.cloud/v1alpha1", "etcds", "default", "etcd-main", ""}, reads);
        return etcd.ok() || !Contains(etcd.error().message, "HTTP 403");
      },
      std::chrono::seconds(10), std::chrono::milliseconds(100));
  if (!allowed) return Error{ErrorCode::kPermissionDenied, user + " cannot read Etcds after its binding", {}};
  return {};
}

Result<RunningController> KubeTestBed::StartController(const ControllerOptions& options) const {
  return StartControllerProcess(*kube_, root_, options);
}

Result<RunningController> StartControllerProcess(const KubeCluster& kube, const std::string& root,
                                                 const ControllerOptions& options) {
  // Its metrics port was free when chosen; when another process took it
  // before the controller listened, the controller exits saying so, and
  // starts again on another. Started: /healthz answers (or it exited for a
  // reason of its own, such as a failure point; the test sees that).
  constexpr int kStartAttempts = 4;
  RunningController controller;
  controller.log = root + "/" + options.name + ".log";
  for (int attempt = 1;; ++attempt) {
    controller.metrics_port = FreeLoopbackPort();
    std::vector<std::string> argv = {RuleplaneBinary(), "controller", "--kubeconfig",
                                     kube.WriteKubeconfig(options.user)};
    if (!options.namespace_name.empty()) argv.insert(argv.end(), {"-n", options.namespace_name});
    argv.insert(argv.end(), {"--journal", options.journal.empty() ? root + "/journal-" + options.name + ".db"
                                                                  : options.journal});
    argv.insert(argv.end(),
                {"--metrics-bind-address", "127.0.0.1:" + std::to_string(controller.metrics_port)});
    argv.insert(argv.end(), options.flags.begin(), options.flags.end());
    const std::uintmax_t log_start = LogSize(controller.log);
    auto started = ChildProcess::Start(argv, controller.log, options.environment);
    if (!started.ok()) return started.error();
    controller.process = std::move(*started);
    HttpClient http;
    const std::string healthz = "http://127.0.0.1:" + std::to_string(controller.metrics_port) + "/healthz";
    Eventually(
        [&] {
          if (!controller.process.running()) return true;
          auto answer = http.Send("GET", healthz, "", std::chrono::seconds(2));
          return answer.ok() && answer->status == 200;
        },
        std::chrono::seconds(20), std::chrono::milliseconds(50));
    if (attempt == kStartAttempts || controller.process.running() ||
        !LogSaysAddressInUse(controller.log, log_start))
      return controller;
  }
}

}  // namespace ruleplane::testing
