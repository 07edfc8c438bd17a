// The end-to-end world that tests/e2e/ and the Kubernetes-level fault
// campaign (tests/chaos/controller_chaos_test.cpp) share: a real
// kube-apiserver with kube-controller-manager, the Etcd CRD, deploy/rbac.yaml's
// Role bound to each controller user, the test kubelet
// (tests/support/node_agent.h) running each member Pod as `ruleplane
// member-init`, a real etcd member and `ruleplane member-agent`, and
// `ruleplane controller` replicas started as deploy/controller.yaml runs them.
//
//   auto world = E2eWorld::Start(dir + "/world", {.controller_users = {"operator"}});
//   auto controller = (*world)->StartController("0", "operator");
//   ASSERT_TRUE((*world)->CreateEtcd(3).ok());
//   Eventually([&] { return (*world)->HealthyWith(3); }, std::chrono::seconds(180));
#pragma once

#include <chrono>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/kubernetes/kube_client.h"
#include "engine/common/json_value.h"
#include "platform/process.h"
#include "tests/support/kube_cluster.h"
#include "tests/support/kube_test_bed.h"
#include "tests/support/node_agent.h"
#include "tests/support/test_helpers.h"
#include "tests/support/test_pki.h"

namespace ruleplane::testing {

struct E2eWorldOptions {
  // Users the controller replicas run as, each bound to deploy/rbac.yaml's Role and nothing else.
  std::vector<std::string> controller_users = {"operator"};
  bool audit_log = false;  // KubeClusterOptions::audit_log
};

class E2eWorld {
 public:
  static constexpr const char* kEtcd = "etcd-main";
  static const KubeResource kEtcdResource;

  // Everything under `root`; stopped (the kubelet first) when destroyed.
  static Result<std::unique_ptr<E2eWorld>> Start(const std::string& root, const E2eWorldOptions& options);
  ~E2eWorld();

  const std::string& root() const { return root_; }
  KubeCluster& kube() { return bed_->kube(); }
  KubeClient& admin() { return bed_->admin(); }
  NodeAgent& agent() { return *agent_; }

  // A controller replica named `name` (its journal journal-<name>.db, its log
  // ControllerLog(name)) as `user`: --allow-disruptive, resync 2 s, minimum
  // disruptive interval 5 s, Lease 6 s / renew deadline 4 s / retry 1 s;
  // `more` flags after those; `failpoint`: RULEPLANE_FAILPOINT
  // (platform/failure_point.h), where it dies.
  Result<ChildProcess> StartController(const std::string& name, const std::string& user,
                                       const std::vector<std::string>& more = {},
                                       const std::string& failpoint = "") const;
  std::string ControllerLog(const std::string& name) const;
  std::string ControllerJournal(const std::string& name) const;  // its SQLite journal

  // A test PKI whose member certificate is for the member Pods' IPs and DNS
  // names, in etcd-druid's Secrets (etcd-ca, etcd-server-tls,
  // etcd-client-tls, etcd-peer-ca, etcd-peer-server-tls, etcd-backup-ca,
  // etcd-backup-server-tls), for an Etcd that is given TLS later.
  Status CreateTlsSecrets();
  // The same, and the Etcd CreateEtcd makes has client and peer TLS and
  // the member agents' API over HTTPS (spec.backup.tls); ClientUrls become
  // https, ClientTls what a client of the members presents. Before CreateEtcd.
  Status EnableTls();
  TlsConfig ClientTls() const { return tls_ ? pki_->ClientTls() : TlsConfig{}; }
  // The Etcd etcd-main from nothing: `replicas` members, backups every 5 s
  // into `store` (spec.backup.store as JSON; a Local store by default).
  Status CreateEtcd(int replicas, const std::string& store = kLocalStore);
  static constexpr const char* kLocalStore =
      R"({"provider":"Local","container":"e2e-backups","prefix":"etcd-main"})";
  Value Etcd();  // as the API server has it; null when it cannot be read
  // `replicas` members Ready in the status, Ready and AllMembersReady True.
  bool HealthyWith(int replicas);
  std::vector<std::string> ClientUrls(int replicas) const;

  // For a failure message: the Etcd's status, a fresh plan, the tails of
  // these controllers' logs, and each member Pod's status and container logs.
  std::string Describe(const std::vector<std::string>& controller_names);

 private:
  E2eWorld() = default;
  std::string root_;
  std::unique_ptr<KubeTestBed> bed_;
  std::unique_ptr<NodeAgent> agent_;
  std::optional<TestPki> pki_;
  bool tls_ = false;  // the Etcd has TLS on every side
};

// The step lines of a controller's log (its JSON lines with a "step"), each
// as "<action> <target> <state>".
std::vector<std::string> StepLines(const std::string& log);

// Overwrites the first 8 KiB of a (stopped) member's database with 0x5a
// bytes: bbolt's meta pages, so that the database cannot be opened.
void CorruptDatabaseHead(const std::string& db);
// Whether `volume` (a member's volume, holding new.etcd) keeps a directory
// moved aside beside the data directory ("new.etcd.<...>") whose database
// is the one CorruptDatabaseHead corrupted.
bool CorruptedDatabaseKeptAside(const std::string& volume);

// `replicas` members Ready in the Etcd's status, and its Ready and
// AllMembersReady conditions True.
bool EtcdHealthyWith(const Value& etcd, int replicas);

// The last `bytes` of a file, for messages.
std::string TailOf(const std::string& path, size_t bytes = 3000);

// One cluster whose members hold the same data: every member names the same
// cluster ID, and its HashKV at the lowest revision they have all applied
// (waited for up to `timeout` while a member does not answer) is equal. Else
// which members differ, or which cannot be asked.
Status MembersAgree(const std::vector<std::string>& client_urls,
                    std::chrono::seconds timeout = std::chrono::seconds(30), const TlsConfig& tls = {});

}  // namespace ruleplane::testing
