// Taking backups from a real etcd as etcd-backup-restore's snapshotter does:
// compressed as the policy says, and deltas bounded by the delta memory
// limit, cut between revisions, never inside one (a transaction's events
// stay together), continuing where the last one stopped.
#include <gtest/gtest.h>

#include "adapters/local/delta_file.h"
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

}  // namespace
}  // namespace ruleplane::testing
