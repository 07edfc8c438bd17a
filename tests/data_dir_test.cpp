// InspectDataDir when etcdctl gives no verdict on the database: missing,
// killed, out of time, or failing for a reason that is not the file's. None
// of these is "corrupt" (that would replace a healthy member): the
// inspection fails instead. Real etcdctl verdicts: tests/etcd/data_dir_test.cpp.
#include "adapters/local/data_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "adapters/local/snapshot_file.h"
#include "tests/support/fake_etcdctl.h"
#include "tests/support/temp_dir.h"

namespace ruleplane::testing {
namespace {

namespace fs = std::filesystem;

class DataDirWithoutVerdict : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = root_.path() + "/data";
    fs::create_directories(data_ + "/member/snap");
    std::ofstream(data_ + "/member/snap/db") << std::string(8192, 'x');
    fs::create_directories(bin_);
  }

  // Inspects with PATH set to bin_ only.
  Result<DataDirFacts> Inspect() {
    ScopedPath path(bin_);
    return InspectDataDir(data_, 0, "");
  }

  void ExpectCouldNotCheck(const Result<DataDirFacts>& facts, const std::string& why) {
    ASSERT_FALSE(facts.ok()) << "read as a verdict: corrupt=" << facts->corrupt << " ("
                             << facts->verification_error << ")";
    EXPECT_EQ(facts.error().code, ErrorCode::kUnavailable) << facts.error().message;
    EXPECT_NE(facts.error().message.find("could not check"), std::string::npos) << facts.error().message;
    EXPECT_NE(facts.error().message.find(why), std::string::npos) << facts.error().message;
  }

  TempDir root_{"data-dir"};
  std::string data_;
  std::string bin_ = root_.path() + "/bin";
};

TEST_F(DataDirWithoutVerdict, EtcdctlMissingIsNotCorrupt) {
  ExpectCouldNotCheck(Inspect(), "cannot run etcdctl");
}

TEST_F(DataDirWithoutVerdict, EtcdctlKilledIsNotCorrupt) {
  ASSERT_TRUE(WriteFakeEtcdctl(bin_, "kill -KILL $$"));
  ExpectCouldNotCheck(Inspect(), "was killed");
}

TEST_F(DataDirWithoutVerdict, EtcdctlFailingForAnotherReasonIsNotCorrupt) {
  // What etcdctl says when it cannot open the file (run as another user, say).
  ASSERT_TRUE(WriteFakeEtcdctl(bin_, "echo \"Error: open $3: permission denied\" >&2; exit 1"));
  ExpectCouldNotCheck(Inspect(), "permission denied");
  // Out of memory: Go's runtime, not bbolt, says so, and exits 2.
  ASSERT_TRUE(WriteFakeEtcdctl(bin_, "echo 'fatal error: runtime: out of memory' >&2; exit 2"));
  ExpectCouldNotCheck(Inspect(), "exited 2");
}

TEST_F(DataDirWithoutVerdict, EtcdctlSayingTheFileIsBadIsCorrupt) {
  ASSERT_TRUE(WriteFakeEtcdctl(bin_, "echo 'Error: invalid database' >&2; exit 1"));
  auto facts = Inspect();
  ASSERT_TRUE(facts.ok()) << facts.error().message;
  EXPECT_TRUE(facts->corrupt);
  EXPECT_FALSE(facts->db_opens);
  EXPECT_FALSE(facts->valid);
}

TEST_F(DataDirWithoutVerdict, AnEmptyDatabaseIsCorruptWithoutAskingEtcdctl) {
  std::ofstream(data_ + "/member/snap/db", std::ios::trunc).flush();
  auto facts = Inspect();  // no etcdctl on PATH: a verdict all the same
  ASSERT_TRUE(facts.ok()) << facts.error().message;
  EXPECT_TRUE(facts->corrupt);
  EXPECT_FALSE(facts->db_opens);
}

TEST_F(DataDirWithoutVerdict, EtcdctlOutOfTimeIsADeadlineNotAVerdict) {
  ASSERT_TRUE(WriteFakeEtcdctl(bin_, "exec /bin/sleep 30"));
  ScopedPath path(bin_);
  const auto started = std::chrono::steady_clock::now();
  auto check = CheckDatabaseFile(data_ + "/member/snap/db", std::chrono::milliseconds(300));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  ASSERT_FALSE(check.ok());
  EXPECT_EQ(check.error().code, ErrorCode::kDeadlineExceeded) << check.error().message;
}

// A running etcd holds its database's flock: the check says so at once
// rather than letting etcdctl wait for the lock until the timeout.
TEST_F(DataDirWithoutVerdict, ADatabaseLockedByAnotherProcessIsNotCheckedAndSaysSo) {
  ASSERT_TRUE(WriteFakeEtcdctl(bin_, "exec /bin/sleep 30"));
  const std::string db = data_ + "/member/snap/db";
  const int holder = open(db.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(holder, 0);
  ASSERT_EQ(flock(holder, LOCK_EX | LOCK_NB), 0);
  const auto started = std::chrono::steady_clock::now();
  ExpectCouldNotCheck(Inspect(), db + " is locked by another process");
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5)) << "etcdctl was run";
  close(holder);
  // Once the lock is gone, the file is checked (the fake etcdctl: cut off at the timeout).
  ScopedPath path(bin_);
  auto check = CheckDatabaseFile(db, std::chrono::milliseconds(300));
  ASSERT_FALSE(check.ok());
  EXPECT_EQ(check.error().code, ErrorCode::kDeadlineExceeded) << check.error().message;
}

// Could not read is not missing and not corrupt (issue 41, hazard 7): an I/O
// error reading the WAL, or a stat that fails for another reason than "no
// such file", leaves the directory alone (kUnavailable). Before, the EIO read
// as a WAL without its metadata record (corrupt: moved aside and restored,
// which on a single member rolls writes back to the last backup), and a path
// that could not be stat'ed read as missing.
class DataDirUnreadable : public DataDirWithoutVerdict {
 protected:
  void ExpectCouldNotRead(const std::string& path, const std::string& why) {
    auto facts = InspectDataDir(data_, 0, "");
    ASSERT_FALSE(facts.ok()) << "read as a verdict: corrupt=" << facts->corrupt << " ("
                             << facts->verification_error << ")";
    EXPECT_EQ(facts.error().code, ErrorCode::kUnavailable) << facts.error().message;
    EXPECT_NE(facts.error().message.find("could not read " + path), std::string::npos)
        << facts.error().message;
    EXPECT_NE(facts.error().message.find(why), std::string::npos) << facts.error().message;
  }
};

TEST_F(DataDirUnreadable, AnIoErrorReadingTheWalIsNotACorruptWal) {
  fs::create_directories(data_ + "/member/wal");
  // Reading /proc/self/mem at offset 0 fails with EIO: a real I/O error from the kernel.
  const std::string segment = data_ + "/member/wal/0000000000000000-0000000000000000.wal";
  fs::create_symlink("/proc/self/mem", segment);
  ExpectCouldNotRead(segment, "Input/output error");
}

TEST_F(DataDirUnreadable, AWalDirectoryOrDataDirectoryThatCannotBeStatedIsNotMissing) {
  // A symbolic link loop: stat fails with ELOOP, not ENOENT.
  fs::create_symlink(data_ + "/member/wal", data_ + "/member/wal");
  ExpectCouldNotRead(data_ + "/member/wal", "symbolic links");
  fs::remove(data_ + "/member/wal");
  fs::remove_all(data_);
  fs::create_symlink(data_, data_);
  ExpectCouldNotRead(data_, "symbolic links");
}

TEST_F(DataDirUnreadable, AShortOrGarbledSegmentIsStillCorruptAndNoSegmentIsStillMissing) {
  fs::remove(data_ + "/member/snap/db");  // the WAL alone decides here
  fs::create_directories(data_ + "/member/wal");
  auto facts = InspectDataDir(data_, 0, "");
  ASSERT_TRUE(facts.ok()) << facts.error().message;
  EXPECT_FALSE(facts->corrupt) << "no segment at all: missing, not corrupt";
  EXPECT_EQ(facts->verification_error, "the WAL directory has no segment");

  std::ofstream(data_ + "/member/wal/0000000000000000-0000000000000000.wal") << "\x10\x00garbled";
  facts = InspectDataDir(data_, 0, "");
  ASSERT_TRUE(facts.ok()) << facts.error().message;
  EXPECT_TRUE(facts->corrupt) << facts->verification_error;
  EXPECT_NE(facts->verification_error.find("has no metadata record"), std::string::npos)
      << facts->verification_error;
}

TEST(DatabaseCheckTimeout, TwoMinutesPlusTenSecondsPerHundredMegabytesBegun) {
  using std::chrono::seconds;
  EXPECT_EQ(DatabaseCheckTimeout(0), seconds(120));
  EXPECT_EQ(DatabaseCheckTimeout(1), seconds(130));
  EXPECT_EQ(DatabaseCheckTimeout(100'000'000), seconds(130));
  EXPECT_EQ(DatabaseCheckTimeout(100'000'001), seconds(140));
  EXPECT_EQ(DatabaseCheckTimeout(8'000'000'000), seconds(120 + 800));  // etcd's largest suggested quota
}

}  // namespace
}  // namespace ruleplane::testing
