// A delta snapshot written by etcd-backup-restore's code path (the golden
// file of tests/data/backup-restore, LZW-compressed as its "lzw" policy
// writes it) replayed by the local adapter into a real etcd, and read back
// from that etcd; and that etcd starts again on new ports when one it was
// given is taken.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "actions/local/local_adapter.h"
#include "tests/support/etcd_cluster.h"
#include "tests/support/source_paths.h"
#include "tests/support/taken_port.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {
namespace {

namespace fs = std::filesystem;

// The golden delta in a Local backup store under `dir`, and the step that
// replays it into <dir>/data through the local adapter's temporary etcd.
class GoldenDeltaReplay {
 public:
  static constexpr const char* kName = "Incr-00000002-00000005-1714557600.Z";

  explicit GoldenDeltaReplay(const std::string& dir) : store_(Prepared(dir) + "/etcd-main") {
    member_.name = "replay";
    member_.peer_url = "http://127.0.0.1:" + std::to_string(FreeLoopbackPort());
    member_.data_dir = dir + "/data";
    member_.command_timeout = std::chrono::seconds(30);
    adapter_ = std::make_unique<LocalAdapter>(member_, &store_, nullptr);
    step_.action = "ApplyIncrementalSnapshots";
    step_.adapter = "local";
    step_.params = Value::MakeMap({{Value::String("snapshots"), Value::MakeList({Value::String(kName)})}});
  }

  const LocalMember& member() const { return member_; }
  Status Perform(RequestLog& log) { return adapter_->Perform(step_, log); }
  Result<bool> IsDone(RequestLog& log) { return adapter_->IsDone(step_, log); }

 private:
  static std::string Prepared(const std::string& dir) {
    fs::create_directories(dir + "/etcd-main/v2");
    fs::copy_file(std::string(SourceDir()) + "/tests/data/backup-restore/" + kName,
                  dir + "/etcd-main/v2/" + kName);
    return dir;
  }
  BackupStore store_;
  LocalMember member_;
  std::unique_ptr<LocalAdapter> adapter_;
  PlanStep step_;
};

TEST(DeltaReplay, AGoldenDeltaIsReplayedRevisionByRevision) {
  TempDir dir("delta-replay");
  GoldenDeltaReplay replay(dir.path());
  const LocalMember& member = replay.member();
  RequestLog log;
  Status replayed = replay.Perform(log);
  ASSERT_TRUE(replayed.ok()) << replayed.error().message;
  auto done = replay.IsDone(log);
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

// Its ports were free when chosen and closed before etcd bound them
// (etcd 3.4 cannot take an inherited socket): when one was taken in
// between, the temporary etcd starts again on new ports. The port is taken
// on purpose here (tests/support/taken_port.h); without the retry, this fails.
TEST(DeltaReplay, TheTemporaryEtcdWhoseClientPortWasTakenStartsOnNewPorts) {
  TempDir dir("delta-replay-port");
  GoldenDeltaReplay replay(dir.path());
  const std::string replay_log = replay.member().data_dir + ".replay.log";
  TakenPort taken({1});  // the temporary etcd's client port
  RequestLog log;
  Status replayed = replay.Perform(log);
  ASSERT_TRUE(replayed.ok()) << replayed.error().message << "\n" << Slurp(replay_log);
  EXPECT_EQ(taken.handed_out(), 1);
  EXPECT_TRUE(Contains(Slurp(replay_log), "address already in use")) << "the first start could not bind";
  auto done = replay.IsDone(log);
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_TRUE(*done) << "the data directory holds the delta's last revision";
}

}  // namespace
}  // namespace ruleplane::testing
