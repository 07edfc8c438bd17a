#include "tests/support/kube_cluster.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "adapters/kubernetes/kube_client.h"

namespace ruleplane::testing {
namespace {

namespace fs = std::filesystem;

// The API groups the server serves: what ruleplane, the tests and kube-controller-manager's controllers use,
// and what the default admission plugins wait for (scheduling's PriorityClasses, node's RuntimeClasses:
// without them no namespace is ever created). Its etcd and it took 5.1 CPU-seconds from start to 15 s after
// ready, against 6.5 with every default group (three starts each); the release tests start about a hundred.
// scripts/node.sh's node keeps every default group: it runs what a cluster runs.
constexpr std::string_view kServedApis =
    "api/all=false,api/v1=true,apps/v1=true,batch/v1=true,policy/v1beta1=true,coordination.k8s.io/v1=true,"
    "rbac.authorization.k8s.io/v1=true,authentication.k8s.io/v1=true,authorization.k8s.io/v1=true,"
    "apiextensions.k8s.io/v1=true,apiregistration.k8s.io/v1=true,networking.k8s.io/v1=true,"
    "scheduling.k8s.io/v1=true,node.k8s.io/v1=true,storage.k8s.io/v1=true,discovery.k8s.io/v1beta1=true,"
    "events.k8s.io/v1=true,certificates.k8s.io/v1=true,admissionregistration.k8s.io/v1=true";

Status Run(const std::vector<std::string>& argv) {
  auto result = RunCommand(argv, std::chrono::seconds(60));
  if (!result.ok()) return result.error();
  if (result->exit_code != 0) return Error{ErrorCode::kIo, argv[0] + " failed: " + result->err, {}};
  return {};
}

}  // namespace

std::string KubeBinDir() {
  const char* bin = std::getenv("RULEPLANE_KUBE_BIN");
  if (bin != nullptr && *bin != '\0') return bin;
  const char* cache = std::getenv("RULEPLANE_KUBE_CACHE");
  return std::string(cache != nullptr && *cache != '\0' ? cache : "/var/cache/ruleplane/kubernetes") + "/bin";
}

Result<std::unique_ptr<KubeCluster>> KubeCluster::Start(const std::string& root,
                                                        const std::vector<std::string>& users) {
  return Start(root, KubeClusterOptions{.users = users});
}

Result<std::unique_ptr<KubeCluster>> KubeCluster::Start(const std::string& root,
                                                        const KubeClusterOptions& options) {
  const std::vector<std::string>& users = options.users;
  std::unique_ptr<KubeCluster> kube(new KubeCluster());
  kube->root_ = root;
  std::error_code made;
  fs::create_directories(root, made);
  const std::string apiserver = KubeBinDir() + "/kube-apiserver";
  if (!fs::exists(apiserver)) {
    return Error{ErrorCode::kNotFound,
                 "no " + apiserver + ": run scripts/build-kubernetes.sh (or set RULEPLANE_KUBE_BIN)",
                 {}};
  }
  // Its storage: a single-member etcd of its own. A port that was free when
  // it was chosen may be taken before etcd binds it (etcd then exits, and
  // kube-apiserver would give up on its storage 20 s later): choose again.
  constexpr int kStartAttempts = 4;
  std::string etcd_client;
  for (int attempt = 1;; ++attempt) {
    etcd_client = "http://127.0.0.1:" + std::to_string(FreeLoopbackPort());
    const std::string etcd_peer = "http://127.0.0.1:" + std::to_string(FreeLoopbackPort());
    auto etcd = ChildProcess::Start(
        {"etcd", "--name", "kube", "--data-dir", root + "/etcd-" + std::to_string(attempt),
         "--listen-client-urls", etcd_client, "--advertise-client-urls", etcd_client, "--listen-peer-urls",
         etcd_peer, "--initial-advertise-peer-urls", etcd_peer, "--initial-cluster", "kube=" + etcd_peer},
        root + "/etcd.log");
    if (!etcd.ok()) return etcd.error();
    kube->etcd_ = std::move(*etcd);
    // etcd exits within a moment when it cannot listen.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    if (kube->etcd_.running()) break;
    if (attempt == kStartAttempts)
      return Error{ErrorCode::kUnavailable, "etcd exited; see " + root + "/etcd.log", {}};
  }

  if (Status key = Run({"openssl", "genrsa", "-out", root + "/sa.key", "2048"}); !key.ok())
    return key.error();
  if (Status pub = Run({"openssl", "rsa", "-in", root + "/sa.key", "-pubout", "-out", root + "/sa.pub"});
      !pub.ok()) {
    return pub.error();
  }
  {
    std::ofstream tokens(root + "/tokens.csv");
    tokens << "admin-token,admin,admin-uid,\"system:masters\"\n";
    for (const std::string& user : users) tokens << user << "-token," << user << "," << user << "-uid\n";
  }
  const std::string cert_dir = root + "/certs";
  kube->ca_file_ = cert_dir + "/apiserver.crt";
  std::vector<std::string> argv = {apiserver,
                                   "--etcd-servers=" + etcd_client,
                                   "--service-cluster-ip-range=10.0.0.0/24",
                                   "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                                   "--service-account-key-file=" + root + "/sa.pub",
                                   "--service-account-signing-key-file=" + root + "/sa.key",
                                   "--bind-address=127.0.0.1",
                                   "--cert-dir=" + cert_dir,
                                   "--advertise-address=127.0.0.1",
                                   "--endpoint-reconciler-type=none",
                                   "--token-auth-file=" + root + "/tokens.csv",
                                   "--authorization-mode=RBAC",
                                   "--runtime-config=" + std::string(kServedApis),
                                   "--enable-priority-and-fairness=false"};
  if (options.audit_log) {
    // Writes only (reads are many and prove nothing here), once answered;
    // the blocking log backend writes each event before the answer goes out.
    // The controllers' Lease with its bodies: who holds it after each write.
    std::ofstream(root + "/audit-policy.yaml") << "apiVersion: audit.k8s.io/v1\n"
                                                  "kind: Policy\n"
                                                  "omitStages: [RequestReceived, ResponseStarted]\n"
                                                  "rules:\n"
                                                  "  - level: None\n"
                                                  "    verbs: [get, list, watch]\n"
                                                  "  - level: RequestResponse\n"
                                                  "    resources:\n"
                                                  "      - group: coordination.k8s.io\n"
                                                  "        resources: [leases]\n"
                                                  "        resourceNames: [ruleplane-controller]\n"
                                                  "  - level: Metadata\n";
    kube->audit_log_path_ = root + "/audit.log";
    argv.push_back("--audit-policy-file=" + root + "/audit-policy.yaml");
    argv.push_back("--audit-log-path=" + kube->audit_log_path_);
    argv.push_back("--audit-log-mode=blocking");
  }
  // Its port too may be taken between the choice and the bind: it then
  // exits saying so, and starts again on another.
  const std::string apiserver_log = root + "/kube-apiserver.log";
  for (int attempt = 1;; ++attempt) {
    const int port = FreeLoopbackPort();
    kube->server_ = "https://127.0.0.1:" + std::to_string(port);
    std::vector<std::string> with_port = argv;
    with_port.push_back("--secure-port=" + std::to_string(port));
    const std::uintmax_t log_start = LogSize(apiserver_log);
    auto started = ChildProcess::Start(with_port, apiserver_log);
    if (!started.ok()) return started.error();
    kube->apiserver_ = std::move(*started);
    Status ready = kube->WaitReady();
    if (ready.ok()) break;
    if (attempt == kStartAttempts || kube->apiserver_.running() ||
        !LogSaysAddressInUse(apiserver_log, log_start))
      return ready.error();
  }
  if (options.controller_manager) {
    if (Status started = kube->StartControllerManager(); !started.ok()) return started.error();
  }
  return kube;
}

Status KubeCluster::WaitReady() {
  // Ready when /readyz answers ok to the admin (4-16 s here).
  const std::string log_path = root_ + "/kube-apiserver.log";
  KubeClient probe(AdminConfig(), std::chrono::seconds(2));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (true) {
    RequestLog reads;
    auto namespaces = probe.Get({"v1", "namespaces", "", "default", ""}, reads);
    if (namespaces.ok()) return {};
    if (!apiserver_.running()) {
      // The test's directory goes with the test: say why here.
      std::ifstream log(log_path);
      std::stringstream text;
      text << log.rdbuf();
      const std::string tail =
          text.str().size() > 2000 ? text.str().substr(text.str().size() - 2000) : text.str();
      return Error{ErrorCode::kUnavailable, "kube-apiserver exited; its log ends with:\n" + tail, {}};
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return Error{ErrorCode::kDeadlineExceeded,
                   "kube-apiserver is not ready (" + namespaces.error().message + "); see " + log_path,
                   {}};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

Status KubeCluster::StartControllerManager() {
  const std::string binary = KubeBinDir() + "/kube-controller-manager";
  if (!fs::exists(binary)) return Error{ErrorCode::kNotFound, "no " + binary, {}};
  auto started = ChildProcess::Start(
      {binary, "--kubeconfig=" + WriteKubeconfig("admin"), "--leader-elect=false", "--port=0",
       "--secure-port=0", "--service-account-private-key-file=" + root_ + "/sa.key",
       "--root-ca-file=" + ca_file_, "--controllers=*", "--use-service-account-credentials=false"},
      root_ + "/kube-controller-manager.log");
  if (!started.ok()) return started.error();
  controller_manager_ = std::move(*started);
  // Its token controller gives the default ServiceAccount a token Secret (1.20 still creates them).
  KubeClient admin(AdminConfig(), std::chrono::seconds(2));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (true) {
    RequestLog reads;
    auto account = admin.Get({"v1", "serviceaccounts", "default", "default", ""}, reads);
    const Value* secrets = account.ok() ? ValueAt(*account, {"secrets"}) : nullptr;
    if (secrets != nullptr && secrets->is_list() && !secrets->list_value().empty()) return {};
    if (!controller_manager_.running()) {
      return Error{ErrorCode::kUnavailable,
                   "kube-controller-manager exited; see " + root_ + "/kube-controller-manager.log",
                   {}};
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return Error{
          ErrorCode::kDeadlineExceeded,
          "no token Secret for the default ServiceAccount; see " + root_ + "/kube-controller-manager.log",
          {}};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

KubeCluster::~KubeCluster() {
  controller_manager_.Stop(std::chrono::seconds(10));
  apiserver_.Stop(std::chrono::seconds(10));
  etcd_.Stop(std::chrono::seconds(10));
}

KubeConfig KubeCluster::ConfigFor(const std::string& user) const {
  KubeConfig config;
  config.server = server_;
  config.tls.ca_file = ca_file_;
  config.token = user + "-token";
  return config;
}

std::string KubeCluster::WriteKubeconfig(const std::string& user) const {
  const std::string path = root_ + "/" + user + ".kubeconfig";
  std::ofstream(path) << "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
                      << "clusters:\n- name: test\n  cluster:\n    server: " << server_
                      << "\n    certificate-authority: " << ca_file_ << "\n"
                      << "users:\n- name: " << user << "\n  user:\n    token: " << user << "-token\n"
                      << "contexts:\n- name: test\n  context:\n    cluster: test\n    user: " << user
                      << "\n    namespace: default\n";
  return path;
}

}  // namespace ruleplane::testing
