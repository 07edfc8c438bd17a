// A real etcd cluster for tests: n members of Debian's etcd on loopback, on
// free ports, in the test's own temporary directory, every process stopped
// by its PID when the cluster is destroyed (SIGTERM, then SIGKILL).
//
//   auto cluster = EtcdCluster::Create(3, TempDir("member-init"));
//   ASSERT_TRUE(cluster->StartAll().ok());               // flags, initial-cluster-state new
//   cluster->StopMember(1);
//   cluster->StartMemberWithConfig(1, config_path);      // etcd --config-file (what member-init wrote)
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "adapters/etcd/etcd_client.h"
#include "platform/process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_pki.h"

namespace ruleplane::testing {

struct EtcdMemberSpec {
  std::string name;        // "m0", "m1", ... (or "<prefix>0", ...)
  std::string client_url;  // http://127.0.0.1:<free port>
  std::string peer_url;
  std::string data_dir;  // <root>/<name>/data
  std::string log_path;  // <root>/<name>/etcd.log
};

class EtcdCluster {
 public:
  // Picks ports and directories for `members` members, named `name_prefix`
  // and the ordinal (etcd-druid names them "<etcd>-<i>"); starts nothing.
  static std::unique_ptr<EtcdCluster> Create(int members, const std::string& root,
                                             const std::string& name_prefix = "m");
  ~EtcdCluster();

  int size() const { return static_cast<int>(specs_.size()); }
  const EtcdMemberSpec& member(int i) const { return specs_[i]; }
  std::vector<std::string> ClientUrls() const;
  std::string InitialCluster() const;  // "m0=http://...,m1=...", every member
  const std::string& token() const { return token_; }

  // Client and peer URLs become https, every member serves them with the
  // PKI's member certificate and asks for client certificates
  // (client-cert-auth, peer-client-cert-auth); Client(), the readiness
  // wait and the configuration templates use it. Before any member starts.
  // `peers_only`: only the peer URLs (clients stay on plain HTTP), also on a
  // running cluster: the members started after it use it (a move to peer TLS).
  void EnableTls(const TestPki& pki, bool peers_only = false);
  // What a client presents to the members: the PKI's client certificate, or nothing without TLS.
  TlsConfig ClientTls() const;

  // More etcd flags for every member started with flags (StartAll, StartMember).
  void set_extra_flags(std::vector<std::string> flags) { extra_flags_ = std::move(flags); }

  // Every member with command-line flags (initial-cluster-state new), then
  // waits until each answers /v3/maintenance/status. A member that could not
  // bind a port it was given (taken since Create chose it) starts the whole
  // cluster again on new ports, from empty data directories (a few times).
  Status StartAll(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // One member with flags, as in StartAll, with this initial-cluster-state.
  Status StartMember(int i, const std::string& initial_cluster_state = "new");
  // One member from an etcd YAML configuration file (`etcd --config-file`).
  Status StartMemberWithConfig(int i, const std::string& config_file);
  // Until the member answers /v3/maintenance/status.
  Status WaitReady(int i, std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // Until member i answers /v3/maintenance/status without a leader (the
  // survivor of a lost quorum); false when it did not within `timeout`.
  bool WaitLeaderless(int i, std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;
  void StopMember(int i);
  void KillMember(int i);  // SIGKILL
  // Sends `signal` to member i's etcd (SIGSTOP, SIGCONT) and does not wait.
  void SignalMember(int i, int signal);
  bool IsRunning(int i);

  // A client on every member's client URL.
  EtcdClient Client() const;
  // A minimal etcd configuration template for member i, as etcd-druid mounts
  // one: listen URLs, advertise URLs, initial-cluster of every member,
  // initial-cluster-token, snapshot-count; written to `path`.
  Status WriteConfigTemplate(int i, const std::string& path) const;

 private:
  EtcdCluster() = default;
  Status WaitAllReady(std::chrono::milliseconds timeout);
  Status WaitReady(int i, std::chrono::milliseconds timeout, bool stop_when_any_exits);
  std::string Scheme(bool peer) const;
  std::vector<EtcdMemberSpec> specs_;
  std::vector<ChildProcess> processes_;
  std::string token_;
  std::vector<std::string> extra_flags_;
  std::optional<TestPki> pki_;
  bool client_tls_ = false;
};

// Keeps putting numbered keys (`<prefix>00000001`, ...) through the cluster
// from a background thread, remembering which puts were acknowledged (with
// their revision), so that a test can check none was lost.
class NumberedWriter {
 public:
  NumberedWriter(std::vector<std::string> endpoints, std::string prefix, TlsConfig tls = {});
  ~NumberedWriter();  // stops
  void Start(std::chrono::milliseconds interval = std::chrono::milliseconds(5));
  void Stop();
  // Writes `count` keys synchronously (no thread); stops at the first failure.
  Status WriteSome(int count);

  struct Ack {
    int64_t index = 0;
    int64_t revision = 0;
  };
  std::vector<Ack> acknowledged() const;
  std::string KeyOf(int64_t index) const;
  // Puts that failed, and the longest time from the last acknowledged put to
  // a failed one (how long the writer saw only errors) while Start ran.
  int64_t failures() const;
  std::chrono::milliseconds longest_outage() const;
  // The longest time between two acknowledged puts (or from the last one to a
  // failed one) while Start ran: an outage, or puts that each took that long.
  std::chrono::milliseconds longest_gap() const;

 private:
  void Loop(std::chrono::milliseconds interval);
  std::vector<std::string> endpoints_;
  std::string prefix_;
  TlsConfig tls_;
  std::atomic<bool> running_{false};
  std::thread thread_;
  mutable std::mutex mutex_;
  std::vector<Ack> acks_;
  int64_t next_ = 1;
  int64_t failures_ = 0;
  std::chrono::milliseconds longest_outage_{0};
  std::chrono::milliseconds longest_gap_{0};
};

// Every acknowledged key of `writer` (up to `up_to_revision`: a restore's
// data-loss bound) that `client` does not return, as "key (revision r)"
// lines; empty when none is missing. The writer may still be running: only
// the puts acknowledged before the read count.
std::vector<std::string> MissingKeys(EtcdClient& client, const NumberedWriter& writer,
                                     int64_t up_to_revision = INT64_MAX);

// One member's answer about the cluster, for checks across members.
struct MemberView {
  uint64_t cluster_id = 0;
  int64_t revision = 0;
  std::vector<std::string> members;  // "<id hex> <name> <peer URL>[ learner]", sorted
};

// What the member at `client_url` says: its cluster ID, revision and member list.
Result<MemberView> MemberViewAt(const std::string& client_url, const TlsConfig& tls = {});
// HashKV of the member at `client_url` at `revision`; retried while it catches up (`attempts` x 100 ms).
Result<uint32_t> HashKvAt(const std::string& client_url, int64_t revision, int attempts = 50,
                          const TlsConfig& tls = {});

}  // namespace ruleplane::testing
