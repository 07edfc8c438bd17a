// A real etcd cluster whose members start the way a Pod of etcd-druid's does:
// `ruleplane member-init` as a process first (the Etcd object given as a JSON
// file), then etcd from the configuration it wrote. The harness plays
// etcd-druid (it writes the Etcd status) and the kubelet (it starts and stops
// the members); tests/etcd/member_init_test.cpp and the fault campaign
// (tests/chaos/) share it.
//
//   MemberHarness harness;
//   ASSERT_TRUE(harness.Create(3, "member-init").ok());
//   ASSERT_NO_FATAL_FAILURE(harness.Bootstrap());
//   harness.cluster_->StopMember(2);
//   Outcome run = harness.MemberInitOf(2, harness.WriteEtcd(2, harness.StatusOfCluster({"m2"})));
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "adapters/local/backup_store.h"
#include "adapters/object_store/store_config.h"
#include "tests/support/etcd_cluster.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {

// A ruleplane (or other) process run to completion.
struct Outcome {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// What the harness writes as the Etcd object's status: etcd-druid's view of the members.
struct StatusMember {
  std::string name;
  std::string id;  // hex, "" when not known yet
  bool ready = true;
};

class MemberHarness {
 public:
  // `size` members named m0, m1, ... under a fresh temporary directory named
  // after `name`, each with its configuration template; starts nothing.
  Status Create(int size, const std::string& name);

  std::string Dir(int i) const { return root_->path() + "/" + cluster_->member(i).name; }
  std::string Template(int i) const { return Dir(i) + "/etcd.template.yaml"; }
  std::string Config(int i) const { return Dir(i) + "/etcd.conf.yaml"; }
  std::string Journal(int i) const { return Dir(i) + "/ruleplane-journal.db"; }
  std::string DataDir(int i) const { return cluster_->member(i).data_dir; }
  // Client and peer TLS with client certificates on every member (a fresh
  // test PKI); member-init, backup and the harness's own reads present the
  // client certificate. After Create, before any member starts.
  // `peers_only`: the peer URLs alone, also on a running cluster: the
  // templates change, and each member that member-init starts again uses
  // them (etcd-druid's Etcd with peerUrlTls set after its creation).
  Status EnableTls(bool peers_only = false);
  std::string Endpoints() const;  // every client URL, comma-separated
  std::string TlsFlags() const;   // " --cacert F --cert F --key F", or "" without TLS

  // The Etcd's metadata.uid in the objects the harness writes; "" for none.
  std::string etcd_uid_;
  // Writes the Etcd object etcd-druid would show and returns its path;
  // `rebootstrap`: the marker an approved quorum-loss plan writes, if any.
  std::string WriteEtcd(int i, const std::vector<StatusMember>& members,
                        const std::string& rebootstrap = "") const;
  // The Etcd status with every current etcd member, `not_ready` marked NotReady.
  Result<std::vector<StatusMember>> LiveStatus(const std::vector<std::string>& not_ready = {}) const;
  // As LiveStatus; a test failure (and an empty status) when no member answers.
  std::vector<StatusMember> StatusOfCluster(const std::vector<std::string>& not_ready = {}) const;

  // `command` through the shell, stdin from /dev/null; `env`: "NAME=value ...".
  static Outcome Shell(const std::string& command, const std::string& env = "");
  Outcome Ruleplane(const std::string& args, const std::string& env = "") const;
  // The arguments of member-init for member i, with the Etcd object `etcd`;
  // `config_template` and `endpoints` ("" for the harness's own: Template(i)
  // and every member's client URL).
  std::string MemberInitArgs(int i, const std::string& etcd, const std::string& config_template = "",
                             const std::string& endpoints = "") const;
  // member-init's arguments for member i as its Pod sees a scale-up from one
  // member (issue 41, hazard 1): the StatefulSet has all the replicas, but the
  // Etcd status still says one member, member i, Ready, the configuration
  // template still names member i alone, and member i's own client URL is the
  // only endpoint the template gives it. Writes the Etcd object and the
  // template beside member i's own.
  std::string MemberInitArgsInScaleUpWindow(int i) const;
  // member-init for member i, with the Etcd object `etcd`.
  Outcome MemberInitOf(int i, const std::string& etcd, const std::string& extra = "",
                       const std::string& env = "") const;
  // `ruleplane backup full|delta` into the store.
  Outcome Backup(const std::string& kind) const;
  // The store's flags for member-init and backup: --backup-store DIR for the
  // Local store (the default), etcd-backup-restore's store flags otherwise.
  std::string StoreFlags() const;
  // The store as ruleplane opens it.
  std::unique_ptr<BackupStore> OpenStore() const;
  Outcome History(int i, const std::string& extra = "") const;

  // A fresh cluster the way etcd-druid starts one: m0 first (no member in
  // the status), then the others as following members; every member starts
  // from the configuration member-init wrote. Test failures on the way.
  void Bootstrap();
  // Every member lost (data directories moved away) after a full backup and
  // `deltas` deltas taken while a writer wrote; without approval the first
  // member waits; with the re-bootstrap marker it restores (killed twice
  // during the replay first) and the others join; every acknowledged key up
  // to the last backup is there, with the hash the lost cluster had.
  // `a_delta_goes_missing` (Local store only): a delta in the middle is
  // hidden first, and the replay stops until it is back. `lose_again`: then
  // a new backup and every member lost a second time: the first incident's
  // marker re-creates nothing (the cluster is left stopped).
  void RebuildAfterQuorumLoss(int deltas, bool a_delta_goes_missing = false, bool lose_again = false);
  // Every member: the configured number of voters, none a learner, the same
  // hashkv at one revision.
  void ExpectHealthyCluster() const;
  void ExpectNoKeyLost(const NumberedWriter& writer, int64_t up_to_revision = 0) const;

  // Halves member i's database and overwrites both bbolt meta pages (halving
  // alone was not enough: the pages in use can all lie in the first half);
  // the member must be stopped. Returns the database's new size.
  Result<uintmax_t> CorruptDatabase(int i) const;
  // Directories beside the data directory: "<data>.<timestamp>" (moved
  // aside), "<data>.restored.<...>"; those whose name starts with the data
  // directory's and then `infix`.
  std::vector<std::string> Beside(int i, const std::string& infix) const;
  // What member i answers itself (status and member list).
  Result<MemberView> ViewOf(int i) const;
  // HashKV of member i at `revision`; retried while it catches up (`attempts` x 100 ms).
  Result<uint32_t> HashAt(int i, int64_t revision, int attempts = 50) const;

  int size_ = 3;
  std::unique_ptr<TempDir> root_;
  std::unique_ptr<EtcdCluster> cluster_;
  std::string store_;  // the Local store's directory
  StoreConfig store_config_;
  std::optional<TestPki> pki_;

 private:
  std::string UidField() const;  // `,"uid":"..."` for the Etcd's metadata, or ""
};

}  // namespace ruleplane::testing
