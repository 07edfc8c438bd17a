// `ruleplane compact` against a real etcd and a backup store: the deltas
// after the newest full snapshot become one new full snapshot holding every
// key at the last delta's revision, with the history before it compacted;
// nothing in the store is removed; killed before its upload, it stores
// nothing, and the next run compacts.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>

#include "actions/local/local_adapter.h"
#include "adapters/etcd/etcd_client.h"
#include "adapters/local/loopback_etcd.h"
#include "adapters/local/snapshot_file.h"
#include "member/backup_taker.h"
#include "platform/failure_point.h"
#include "tests/run_ruleplane.h"
#include "tests/support/etcd_cluster.h"

namespace ruleplane::testing {
namespace {

using testing_support::Ruleplane;

class BackupCompaction : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = EtcdCluster::Create(1, dir_.path());
    ASSERT_TRUE(cluster_->StartAll().ok());
    client_.emplace(EtcdClientConfig{cluster_->ClientUrls(), {}, std::chrono::seconds(10)});
  }

  // A full snapshot, then three deltas of keys written over and over (a
  // history to compact) and one new key each.
  void WriteBackups() {
    options_.timeout = std::chrono::seconds(20);
    options_.compression_suffix = ".gz";
    for (int key = 0; key < 20; ++key) Put("/registry/k" + std::to_string(key), "v0");
    auto full = TakeFullBackup(*client_, store_, options_, log_);
    ASSERT_TRUE(full.ok()) << full.error().message;
    for (int round = 1; round <= 3; ++round) {
      for (int write = 0; write < 40; ++write)
        Put("/registry/k" + std::to_string(write % 20), std::string(4096, 'a' + round));
      Put("/registry/kept" + std::to_string(round), "x");
      auto delta = TakeDeltaBackup(*client_, store_, options_, log_);
      ASSERT_TRUE(delta.ok()) << delta.error().message;
      ASSERT_FALSE(delta->name.empty());
    }
  }

  void Put(const std::string& key, const std::string& value) {
    auto put = client_->Put(key, value, log_);
    ASSERT_TRUE(put.ok()) << put.error().message;
  }

  std::map<std::string, std::string> KeysOf(EtcdClient& client) {
    RequestLog log;
    auto range = client.Range("/", std::string(1, '\0'), 0, log);
    EXPECT_TRUE(range.ok()) << range.error().message;
    std::map<std::string, std::string> keys;
    if (range.ok()) {
      for (const KeyValue& kv : range->second) keys[kv.key] = kv.value;
    }
    return keys;
  }

  std::string CompactArgs() const {
    return "compact --backup-store " + dir_.path() + "/store --data-dir " + dir_.path() + "/work";
  }

  TempDir dir_{"backup-compaction"};
  std::unique_ptr<EtcdCluster> cluster_;
  std::optional<EtcdClient> client_;
  BackupStore store_{dir_.path() + "/store"};
  BackupOptions options_;
  RequestLog log_;
};

TEST_F(BackupCompaction, TheDeltasBecomeOneFullSnapshotWithEveryKeyAndNoHistory) {
  WriteBackups();
  auto before = store_.List();
  ASSERT_TRUE(before.ok());
  ASSERT_EQ(before->snapshots.size(), 4u);
  const int64_t last_revision = before->snapshots.back().last_revision;

  auto run = Ruleplane(CompactArgs());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto outcome = nlohmann::json::parse(run.out);
  EXPECT_EQ(outcome["revision"], last_revision) << run.out;
  EXPECT_EQ(outcome["deltas"], 3) << run.out;
  EXPECT_LT(outcome["databaseBytesAfter"].get<int64_t>(), outcome["databaseBytesBefore"].get<int64_t>())
      << "the defragmentation freed nothing: " << run.out;

  // Nothing removed; the new full snapshot is the newest, with no delta after it.
  auto after = store_.List();
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->snapshots.size(), 5u);
  EXPECT_EQ(after->LatestFullIndex(), 4u);
  EXPECT_EQ(after->snapshots[4].name, outcome["snapshot"].get<std::string>());
  EXPECT_EQ(after->snapshots[4].last_revision, last_revision);
  EXPECT_TRUE(after->snapshots[4].name.ends_with(".gz"));

  // Restored on its own, the new snapshot holds what the cluster holds, at its revision, and no older
  // revision.
  LocalMember member;
  member.name = "check";
  member.peer_url = "http://127.0.0.1:2380";
  member.data_dir = dir_.path() + "/check.etcd";
  LocalAdapter local(member, &store_, nullptr);
  PlanStep restore;
  restore.action = "RestoreFullSnapshot";
  restore.params =
      Value::MakeMap({{Value::String("snapshot"), Value::String(after->snapshots[4].name)},
                      {Value::String("initialCluster"), Value::String("check=http://127.0.0.1:2380")}});
  ASSERT_TRUE(local.Perform(restore, log_).ok());
  auto restored = StartLoopbackEtcd("check", member.data_dir, dir_.path() + "/check.log", log_);
  ASSERT_TRUE(restored.ok()) << restored.error().message;
  EXPECT_EQ(restored->revision, last_revision);
  EtcdClient restored_client(EtcdClientConfig{{restored->client_url}, {}, std::chrono::seconds(10)});
  const auto keys = KeysOf(restored_client);
  EXPECT_EQ(keys.size(), 23u);
  EXPECT_EQ(keys, KeysOf(*client_));
  RequestLog log;
  auto old = restored_client.Range("/registry/k0", "", last_revision - 1, log);
  ASSERT_FALSE(old.ok()) << "a revision before the compaction is still there";
  EXPECT_NE(old.error().message.find("compacted"), std::string::npos) << old.error().message;
  restored->process.Stop();

  // Run again: nothing after the new full snapshot, nothing stored.
  auto again = Ruleplane(CompactArgs());
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(nlohmann::json::parse(again.out)["snapshot"], "") << again.out;
  auto listed = store_.List();
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->snapshots.size(), 5u);
}

TEST_F(BackupCompaction, KilledBeforeItsUploadItStoresNothingAndTheNextRunCompacts) {
  WriteBackups();
  for (int kill = 0; kill < 2; ++kill) {
    setenv("RULEPLANE_FAILPOINT", "compaction:before-upload", 1);
    auto killed = Ruleplane(CompactArgs());
    unsetenv("RULEPLANE_FAILPOINT");
    ASSERT_EQ(killed.exit_code, kFailPointExitCode) << killed.err;
    auto listed = store_.List();
    ASSERT_TRUE(listed.ok());
    EXPECT_EQ(listed->snapshots.size(), 4u) << "kill " << kill;
  }
  auto run = Ruleplane(CompactArgs());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["deltas"], 3) << run.out;
  auto listed = store_.List();
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->snapshots.size(), 5u);
}

// Another etcd cluster's history on the same prefix (a member that split off,
// an Etcd created again under the same name) is not this cluster's to compact:
// without --cluster-id the compaction took whichever history was newest and
// wrote its revision to the full-snapshot Lease; with it, the cluster's own
// chain is compacted and the other one is left alone. --max-revision (the
// cluster's revision when the controller decided) leaves what is beyond it.
TEST_F(BackupCompaction, WithAClusterIdAnotherClustersNewerHistoryIsSkipped) {
  WriteBackups();
  auto own = store_.List();
  ASSERT_TRUE(own.ok());
  const int64_t own_last_revision = own->snapshots.back().last_revision;
  const uint64_t own_cluster = own->snapshots.back().cluster_id;
  ASSERT_NE(own_cluster, 0u) << "the snapshots are marked with their cluster";

  // A second cluster appends a longer history to the same store.
  TempDir other_dir{"backup-compaction-other"};
  auto other = EtcdCluster::Create(1, other_dir.path());
  ASSERT_TRUE(other->StartAll().ok());
  EtcdClient other_client = other->Client();
  for (int64_t key = 0; key <= own_last_revision + 20; ++key) {
    ASSERT_TRUE(other_client.Put("/registry/other" + std::to_string(key), "o", log_).ok());
  }
  auto other_full = TakeFullBackup(other_client, store_, options_, log_);
  ASSERT_TRUE(other_full.ok()) << other_full.error().message;
  ASSERT_TRUE(other_client.Put("/registry/other-last", "o", log_).ok());
  auto other_delta = TakeDeltaBackup(other_client, store_, options_, log_);
  ASSERT_TRUE(other_delta.ok()) << other_delta.error().message;
  auto mixed = store_.List();
  ASSERT_TRUE(mixed.ok());
  const int64_t other_last_revision = mixed->snapshots.back().last_revision;
  ASSERT_NE(mixed->snapshots.back().cluster_id, own_cluster);
  ASSERT_GT(other_last_revision, own_last_revision);

  auto unfiltered = Ruleplane(CompactArgs());
  ASSERT_EQ(unfiltered.exit_code, 0) << unfiltered.err;
  EXPECT_EQ(nlohmann::json::parse(unfiltered.out)["revision"], other_last_revision)
      << "without --cluster-id the newest history is compacted, whichever cluster's: " << unfiltered.out;

  const int64_t second_delta_revision = own->snapshots[2].last_revision;
  auto bounded = Ruleplane(CompactArgs() + " --cluster-id " + MemberIdHex(own_cluster) + " --max-revision " +
                           std::to_string(second_delta_revision));
  ASSERT_EQ(bounded.exit_code, 0) << bounded.err;
  EXPECT_EQ(nlohmann::json::parse(bounded.out)["revision"], second_delta_revision) << bounded.out;
  EXPECT_EQ(nlohmann::json::parse(bounded.out)["deltas"], 2) << bounded.out;

  auto filtered = Ruleplane(CompactArgs() + " --cluster-id " + MemberIdHex(own_cluster));
  ASSERT_EQ(filtered.exit_code, 0) << filtered.err;
  auto outcome = nlohmann::json::parse(filtered.out);
  EXPECT_EQ(outcome["revision"], own_last_revision) << filtered.out;
  EXPECT_EQ(outcome["deltas"], 1) << "the third delta, after the compacted full snapshot: " << filtered.out;
  auto after = store_.List();
  ASSERT_TRUE(after.ok());
  auto compacted = std::find_if(after->snapshots.begin(), after->snapshots.end(),
                                [&](const StoredSnapshot& s) { return s.name == outcome["snapshot"]; });
  ASSERT_NE(compacted, after->snapshots.end()) << filtered.out;
  EXPECT_EQ(compacted->cluster_id, own_cluster);
  EXPECT_EQ(compacted->last_revision, own_last_revision);

  auto no_such_cluster = Ruleplane(CompactArgs() + " --cluster-id 1234abcd");
  EXPECT_EQ(no_such_cluster.exit_code, 1) << no_such_cluster.err;
  EXPECT_TRUE(testing_support::Contains(no_such_cluster.err, "has no full snapshot of etcd cluster 1234abcd"))
      << no_such_cluster.err;
  auto not_hex = Ruleplane(CompactArgs() + " --cluster-id own");
  EXPECT_EQ(not_hex.exit_code, 2) << not_hex.err;
  EXPECT_TRUE(testing_support::Contains(not_hex.err, "--cluster-id must be")) << not_hex.err;
}

TEST_F(BackupCompaction, AStoreWithoutAFullSnapshotIsAnErrorNamingIt) {
  auto run = Ruleplane(CompactArgs());
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_TRUE(testing_support::Contains(run.err, "has no full snapshot")) << run.err;
}

// What the compaction publishes is verified first, as every full snapshot
// taken from a member is: one etcdctl cannot open, or one past the revision
// the deltas end at, is refused (the compaction stored its copy of the
// database unchecked before, and the next garbage collection deleted the
// deltas it replaced).
TEST_F(BackupCompaction, AFullSnapshotIsVerifiedBeforeItIsPublished) {
  Put("/registry/a", "1");
  const std::string stream = dir_.path() + "/taken.snapshot";
  auto taken = client_->Snapshot(cluster_->ClientUrls()[0], stream, log_);
  ASSERT_TRUE(taken.ok()) << taken.error().message;
  auto revision = SnapshotFileRevision(stream, std::chrono::seconds(20));
  ASSERT_TRUE(revision.ok()) << revision.error().message;
  EXPECT_TRUE(VerifyFullSnapshot(stream, *revision, std::chrono::seconds(20)).ok());
  const Status past = VerifyFullSnapshot(stream, *revision - 1, std::chrono::seconds(20));
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.error().message.find("past " + std::to_string(*revision - 1)), std::string::npos)
      << past.error().message;

  const std::string garbled_db = dir_.path() + "/garbled.db";
  std::ofstream(garbled_db) << std::string(1 << 16, 'g');
  ASSERT_TRUE(WriteSnapshotStream(garbled_db, dir_.path() + "/garbled.snapshot").ok());
  const Status garbled =
      VerifyFullSnapshot(dir_.path() + "/garbled.snapshot", *revision, std::chrono::seconds(20));
  ASSERT_FALSE(garbled.ok()) << "a stream whose SHA-256 trailer matches, of a database that does not open";
  EXPECT_EQ(garbled.error().code, ErrorCode::kIo) << garbled.error().message;
}

}  // namespace
}  // namespace ruleplane::testing
