// Taking backups from a real etcd as etcd-backup-restore's snapshotter does:
// compressed as the policy says, and deltas bounded by the delta memory
// limit, cut between revisions, never inside one (a transaction's events
// stay together), continuing where the last one stopped; and two clusters on
// one store kept apart.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "actions/local/local_adapter.h"
#include "adapters/local/delta_file.h"
#include "member/backup_compaction.h"
#include "member/backup_taker.h"
#include "tests/support/etcd_cluster.h"

namespace ruleplane::testing {
namespace {

TEST(BackupTaker, DeltasStopAtTheMemoryLimitBetweenRevisionsAndTheNextContinues) {
  TempDir dir("backup-taker");
  auto cluster = EtcdCluster::Create(1, dir.path());
  ASSERT_TRUE(cluster->StartAll().ok());
  EtcdClient client(EtcdClientConfig{cluster->ClientUrls(), {}, std::chrono::seconds(5)});
  BackupStore store(dir.path() + "/etcd-main");
  BackupOptions options;
  options.timeout = std::chrono::seconds(20);
  options.compression_suffix = ".gz";
  RequestLog log;
  ASSERT_TRUE(client.Put("/registry/first", "1", log).ok());
  auto full = TakeFullBackup(client, store, options, log);
  ASSERT_TRUE(full.ok()) << full.error().message;
  EXPECT_TRUE(full->name.ends_with(".gz")) << full->name;

  // 40 puts of 8 KiB, then a transaction of three 8 KiB keys in one revision, then 40 more.
  const std::string value(8 * 1024, 'v');
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(client.Put("/registry/a" + std::to_string(i), value, log).ok());
  std::vector<EtcdEvent> transaction;
  for (const char* key : {"/registry/t1", "/registry/t2", "/registry/t3"}) {
    EtcdEvent event;
    event.kv.key = key;
    event.kv.value = value;
    transaction.push_back(event);
  }
  auto transaction_revision = client.Txn(transaction, log);
  ASSERT_TRUE(transaction_revision.ok()) << transaction_revision.error().message;
  int64_t last = 0;
  for (int i = 0; i < 40; ++i) {
    auto put = client.Put("/registry/b" + std::to_string(i), value, log);
    ASSERT_TRUE(put.ok());
    last = *put;
  }

  options.delta_memory_limit = 100 * 1024;  // about 12 events of 8 KiB
  int64_t expected_start = full->revision + 1;
  int deltas = 0;
  bool more = true;
  while (more) {
    ASSERT_LT(++deltas, 20) << "the deltas never reached revision " << last;
    auto delta = TakeDeltaBackup(client, store, options, log);
    ASSERT_TRUE(delta.ok()) << delta.error().message;
    ASSERT_FALSE(delta->name.empty());
    EXPECT_TRUE(delta->name.ends_with(".gz")) << delta->name;
    auto bytes = store.ReadSnapshot(delta->name);
    ASSERT_TRUE(bytes.ok()) << bytes.error().message;
    auto events = ParseDelta(*bytes);
    ASSERT_TRUE(events.ok()) << events.error().message;
    ASSERT_FALSE(events->empty());
    EXPECT_EQ(events->front().kv.mod_revision, expected_start) << delta->name;
    EXPECT_EQ(events->back().kv.mod_revision, delta->revision) << delta->name;
    int64_t bytes_held = 0;
    int transaction_events = 0;
    for (const EtcdEvent& event : *events) {
      bytes_held += static_cast<int64_t>(event.kv.key.size() + event.kv.value.size());
      transaction_events += event.kv.mod_revision == *transaction_revision;
    }
    EXPECT_TRUE(transaction_events == 0 || transaction_events == 3)
        << "the transaction was split: " << transaction_events << " of its 3 events in " << delta->name;
    // Over the limit by less than one revision's events (here at most three of 8 KiB).
    EXPECT_LE(bytes_held, options.delta_memory_limit + 3 * static_cast<int64_t>(value.size() + 16))
        << delta->name;
    more = delta->more;
    EXPECT_EQ(more, delta->revision < last) << delta->name;
    expected_start = delta->revision + 1;
  }
  EXPECT_EQ(expected_start, last + 1);
  EXPECT_GE(deltas, 7) << "81 events of 8 KiB under a 100 KiB limit";
}

uint64_t ClusterId(EtcdClient& client, const std::string& endpoint) {
  RequestLog reads;
  auto status = client.MemberStatus(endpoint, reads);
  return status.ok() ? status->cluster_id : 0;
}

// Two clusters on one backup store (a split brain's two sides: their first
// members differ, so etcd gave them different IDs): every snapshot is marked
// with the cluster it was taken from, a delta never continues a chain that
// holds the other cluster's snapshot (the agent then takes a full one,
// member/member_backups.cpp), and a replay or a compaction of a chain that
// mixes them changes nothing.
TEST(BackupTaker, ADeltaNeverContinuesAnotherClustersSnapshotAndAMixedChainIsNotReplayed) {
  TempDir dir("backup-two-clusters");
  auto first = EtcdCluster::Create(1, dir.path() + "/first");
  auto second = EtcdCluster::Create(1, dir.path() + "/second");
  ASSERT_TRUE(first->StartAll().ok());
  ASSERT_TRUE(second->StartAll().ok());
  EtcdClient first_client(EtcdClientConfig{first->ClientUrls(), {}, std::chrono::seconds(5)});
  EtcdClient second_client(EtcdClientConfig{second->ClientUrls(), {}, std::chrono::seconds(5)});
  const uint64_t first_id = ClusterId(first_client, first->ClientUrls()[0]);
  const uint64_t second_id = ClusterId(second_client, second->ClientUrls()[0]);
  ASSERT_NE(first_id, 0u);
  ASSERT_NE(second_id, 0u);
  ASSERT_NE(first_id, second_id);
  BackupStore store(dir.path() + "/etcd-main");
  BackupOptions options;
  options.timeout = std::chrono::seconds(20);
  RequestLog log;
  ASSERT_TRUE(first_client.Put("/registry/first", "1", log).ok());
  auto first_full = TakeFullBackup(first_client, store, options, log);
  ASSERT_TRUE(first_full.ok()) << first_full.error().message;
  for (int i = 0; i < 10; ++i)
    ASSERT_TRUE(second_client.Put("/registry/second" + std::to_string(i), "2", log).ok());

  auto refused = TakeDeltaBackup(second_client, store, options, log);
  ASSERT_FALSE(refused.ok()) << "the second cluster's events were stored after the first's snapshot as "
                             << refused->name;
  EXPECT_EQ(refused.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(refused.error().message.find("taken from etcd cluster " + MemberIdHex(first_id) +
                                         ", this is cluster " + MemberIdHex(second_id)),
            std::string::npos)
      << refused.error().message;
  ASSERT_EQ(store.List()->snapshots.size(), 1u) << "nothing was appended";

  auto second_full = TakeFullBackup(second_client, store, options, log);
  ASSERT_TRUE(second_full.ok()) << second_full.error().message;
  ASSERT_TRUE(second_client.Put("/registry/second-more", "3", log).ok());
  auto second_delta = TakeDeltaBackup(second_client, store, options, log);
  ASSERT_TRUE(second_delta.ok()) << second_delta.error().message;
  ASSERT_FALSE(second_delta->name.empty());
  auto listing = store.List();
  ASSERT_TRUE(listing.ok()) << listing.error().message;
  std::map<std::string, uint64_t> marked;
  for (const StoredSnapshot& snapshot : listing->snapshots) marked[snapshot.name] = snapshot.cluster_id;
  EXPECT_EQ(marked[first_full->name], first_id);
  EXPECT_EQ(marked[second_full->name], second_id);
  EXPECT_EQ(marked[second_delta->name], second_id);

  // What the first cluster's side appends after them when it checked the
  // store just before the second cluster's full snapshot landed (a race of
  // two agents, written here directly).
  EtcdEvent event;
  event.kv.key = "/registry/first-side";
  event.kv.value = "x";
  event.kv.create_revision = event.kv.mod_revision = second_delta->revision + 1;
  event.kv.version = 1;
  auto foreign =
      store.WriteDelta(SerializeDelta({event}, "2024-05-01T10:00:00Z"), second_delta->revision + 1,
                       second_delta->revision + 1, first_id, std::chrono::system_clock::now(), "", log);
  ASSERT_TRUE(foreign.ok()) << foreign.error().message;

  LocalMember member;
  member.name = "replay";
  member.peer_url = "http://127.0.0.1:" + std::to_string(FreeLoopbackPort());
  member.data_dir = dir.path() + "/replay";
  member.command_timeout = std::chrono::seconds(30);
  LocalAdapter local(member, &store, nullptr);
  PlanStep replay;
  replay.action = "ApplyIncrementalSnapshots";
  replay.adapter = "local";
  replay.params =
      Value::MakeMap({{Value::String("snapshots"),
                       Value::MakeList({Value::String(second_delta->name), Value::String(*foreign)})}});
  Status replayed = local.Perform(replay, log);
  ASSERT_FALSE(replayed.ok()) << "a chain of two clusters was replayed";
  EXPECT_EQ(replayed.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(replayed.error().message.find("one replay would mix two clusters' histories"), std::string::npos)
      << replayed.error().message;
  EXPECT_FALSE(std::filesystem::exists(member.data_dir)) << "nothing was applied";

  CompactionOptions compaction;
  compaction.work_dir = dir.path() + "/compaction";
  std::filesystem::create_directories(compaction.work_dir);
  auto compacted = CompactBackups(store, compaction, log);
  ASSERT_FALSE(compacted.ok()) << "compacted into " << compacted->snapshot;
  EXPECT_EQ(compacted.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(store.List()->snapshots.size(), 4u) << "nothing was stored";

  // Nor does the second cluster append to that chain: its agent takes a full snapshot instead.
  ASSERT_TRUE(second_client.Put("/registry/second-later", "4", log).ok());
  ASSERT_TRUE(second_client.Put("/registry/second-later", "5", log).ok());
  auto appended = TakeDeltaBackup(second_client, store, options, log);
  ASSERT_FALSE(appended.ok()) << "appended " << appended->name << " after " << *foreign;
  EXPECT_NE(appended.error().message.find(*foreign + " was taken from etcd cluster " + MemberIdHex(first_id)),
            std::string::npos)
      << appended.error().message;
}

}  // namespace
}  // namespace ruleplane::testing
