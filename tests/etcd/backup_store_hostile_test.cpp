// Issue 24, class 6, against a real etcd: a stray
// Full-...-9223372036854775807-... in the store made `backup delta` say
// "nothing to back up" on every run (the store seemed ahead of the cluster),
// so that backups stopped silently. It is skipped and reported now, and the
// delta taken is one the replay reads (class 5).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "adapters/local/delta_file.h"
#include "member/backup_taker.h"
#include "tests/support/etcd_cluster.h"

namespace ruleplane::testing {
namespace {

namespace fs = std::filesystem;

TEST(BackupStoreHostile, AStrayNameBeyondTheClustersRevisionDoesNotStopDeltas) {
  TempDir dir("backup-stray");
  auto cluster = EtcdCluster::Create(1, dir.path());
  ASSERT_TRUE(cluster->StartAll().ok());
  EtcdClient client(EtcdClientConfig{cluster->ClientUrls(), {}, std::chrono::seconds(5)});
  BackupStore store(dir.path() + "/etcd-main");
  BackupOptions options;
  options.timeout = std::chrono::seconds(20);
  RequestLog log;
  ASSERT_TRUE(client.Put("/registry/a", "1", log).ok());
  auto full = TakeFullBackup(client, store, options, log);
  ASSERT_TRUE(full.ok()) << full.error().message;
  std::ofstream(store.location() + "/v2/Full-00000000-9223372036854775807-1700000000") << "stray";
  ASSERT_TRUE(client.Put("/registry/b", "2", log).ok());
  ASSERT_TRUE(client.Put("/registry/c", "3", log).ok());

  auto delta = TakeDeltaBackup(client, store, options, log);
  ASSERT_TRUE(delta.ok()) << delta.error().message;
  EXPECT_FALSE(delta->name.empty()) << "said: nothing to back up";
  EXPECT_EQ(delta->events, 2);
  ASSERT_EQ(delta->warnings.size(), 1u);
  EXPECT_NE(delta->warnings[0].find("Full-00000000-9223372036854775807-1700000000"), std::string::npos)
      << delta->warnings[0];
  EXPECT_NE(delta->warnings[0].find("suspect, skipped"), std::string::npos) << delta->warnings[0];
  EXPECT_TRUE(fs::exists(store.location() + "/v2/Full-00000000-9223372036854775807-1700000000"))
      << "reported, never deleted";
  auto bytes = store.ReadSnapshot(delta->name);
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  EXPECT_TRUE(ParseDelta(*bytes).ok());
}

}  // namespace
}  // namespace ruleplane::testing
