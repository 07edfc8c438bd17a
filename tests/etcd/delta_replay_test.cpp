// A delta snapshot written by etcd-backup-restore's code path (the golden
// file of tests/data/backup-restore, LZW-compressed as its "lzw" policy
// writes it) replayed by the local adapter into a real etcd, and read back
// from that etcd.
#include <gtest/gtest.h>

#include <filesystem>

#include "adapters/local/local_adapter.h"
#include "tests/support/etcd_cluster.h"

namespace ruleplane::testing {
namespace {

namespace fs = std::filesystem;

TEST(DeltaReplay, AGoldenDeltaIsReplayedRevisionByRevision) {
  TempDir dir("delta-replay");
  const std::string name = "Incr-00000002-00000005-1714557600.Z";
  fs::create_directories(dir.path() + "/etcd-main/v2");
  fs::copy_file(std::string(RULEPLANE_SOURCE_DIR) + "/tests/data/backup-restore/" + name,
                dir.path() + "/etcd-main/v2/" + name);
  BackupStore store(dir.path() + "/etcd-main");

  LocalMember member;
  member.name = "replay";
  member.peer_url = "http://127.0.0.1:" + std::to_string(FreeLoopbackPort());
  member.data_dir = dir.path() + "/data";
  member.command_timeout = std::chrono::seconds(30);
  LocalAdapter adapter(member, &store, nullptr);

  PlanStep step;
  step.action = "ApplyIncrementalSnapshots";
  step.adapter = "local";
  step.params = Value::MakeMap({{Value::String("snapshots"), Value::MakeList({Value::String(name)})}});
  RequestLog log;
  Status replayed = adapter.Perform(step, log);
  ASSERT_TRUE(replayed.ok()) << replayed.error().message;
  auto done = adapter.IsDone(step, log);
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_TRUE(*done) << "the data directory holds the delta's last revision";

  // Read it back from etcd started on the replayed data directory.
  const std::string client_url = "http://127.0.0.1:" + std::to_string(FreeLoopbackPort());
  auto etcd = ChildProcess::Start(
      {"etcd", "--name", "replay", "--data-dir", member.data_dir, "--listen-client-urls", client_url,
       "--advertise-client-urls", client_url, "--listen-peer-urls", member.peer_url,
       "--initial-advertise-peer-urls", member.peer_url, "--initial-cluster", "replay=" + member.peer_url},
      dir.path() + "/etcd.log");
  ASSERT_TRUE(etcd.ok()) << etcd.error().message;
  EtcdClient client(EtcdClientConfig{{client_url}, {}, std::chrono::seconds(2)});
  Result<std::pair<int64_t, std::vector<KeyValue>>> range = Error{ErrorCode::kUnavailable, "not asked", {}};
  for (int attempt = 0; attempt < 100 && !range.ok(); ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    RequestLog reads;
    range = client.Range("/", std::string(1, '\0'), 0, reads);
  }
  ASSERT_TRUE(range.ok()) << range.error().message;
  EXPECT_EQ(range->first, 5) << "one revision per source revision";
  std::map<std::string, KeyValue> keys;
  for (const KeyValue& kv : range->second) keys[kv.key] = kv;
  EXPECT_EQ(keys.count("/registry/pods/a"), 0u) << "deleted at revision 4";
  ASSERT_EQ(keys.size(), 3u);
  EXPECT_EQ(keys["/registry/pods/b"].value, std::string("\0\1\2\xff", 4));
  EXPECT_EQ(keys["/registry/pods/b"].mod_revision, 3);
  EXPECT_EQ(keys["/registry/pods/c"].value, "in the same txn");
  EXPECT_EQ(keys["/registry/pods/c"].mod_revision, 3) << "a transaction stays one transaction";
  EXPECT_EQ(keys["/registry/leases/x"].value, "leased");
  EXPECT_EQ(keys["/registry/leases/x"].lease, 0)
      << "replayed without its lease, so it cannot expire and vanish";
  etcd->Stop();
}

}  // namespace
}  // namespace ruleplane::testing
