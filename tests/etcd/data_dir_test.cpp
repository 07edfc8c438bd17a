// InspectDataDir on a real member's data directory, with Debian's etcdctl:
// a database etcd wrote is valid; one etcdctl says is bad is corrupt; one it
// cannot check (etcdctl not on PATH) is neither: the inspection fails.
#include "adapters/local/data_dir.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "tests/support/etcd_cluster.h"
#include "tests/support/fake_etcdctl.h"
#include "tests/support/io_error_mount.h"

namespace ruleplane::testing {
namespace {

namespace fs = std::filesystem;

class RealDataDir : public ::testing::Test {
 protected:
  // One member's data directory, written by a real etcd, then stopped.
  static void SetUpTestSuite() {
    root_ = new TempDir("real-data-dir");
    auto cluster = EtcdCluster::Create(1, root_->path());
    ASSERT_TRUE(cluster->StartAll().ok());
    NumberedWriter writer(cluster->ClientUrls(), "inspect/");
    ASSERT_TRUE(writer.WriteSome(10).ok());
    cluster->StopMember(0);
    original_ = cluster->member(0).data_dir;
  }
  static void TearDownTestSuite() {
    delete root_;
    root_ = nullptr;
  }

  // A copy of the member's data directory of this test's own.
  void SetUp() override {
    ASSERT_FALSE(original_.empty());
    data_ = copies_.path() + "/data";
    fs::copy(original_, data_, fs::copy_options::recursive);
    db_ = data_ + "/member/snap/db";
  }

  static TempDir* root_;
  static std::string original_;
  TempDir copies_{"real-data-dir-copy"};
  std::string data_;
  std::string db_;
};

TempDir* RealDataDir::root_ = nullptr;
std::string RealDataDir::original_;

TEST_F(RealDataDir, TheDatabaseEtcdWroteIsValid) {
  auto facts = InspectDataDir(data_, 0, "");
  ASSERT_TRUE(facts.ok()) << facts.error().message;
  EXPECT_TRUE(facts->valid) << facts->verification_error;
  EXPECT_TRUE(facts->db_opens);
  EXPECT_FALSE(facts->corrupt);
  EXPECT_GE(facts->db_revision, 11) << "ten puts after revision 1";
}

// The data directory of an etcd that runs: its database is locked, and the
// inspection says so at once instead of waiting in etcdctl for the lock.
TEST(RunningDataDir, TheDatabaseOfARunningEtcdIsLockedAndNotChecked) {
  TempDir root("running-data-dir");
  auto cluster = EtcdCluster::Create(1, root.path());
  ASSERT_TRUE(cluster->StartAll().ok());
  const auto started = std::chrono::steady_clock::now();
  auto facts = InspectDataDir(cluster->member(0).data_dir, 0, "");
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  ASSERT_FALSE(facts.ok()) << "inspected while etcd holds it";
  EXPECT_EQ(facts.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(facts.error().message.find("is locked by another process"), std::string::npos)
      << facts.error().message;
  cluster->StopMember(0);
  facts = InspectDataDir(cluster->member(0).data_dir, 0, "");
  ASSERT_TRUE(facts.ok()) << facts.error().message;
  EXPECT_TRUE(facts->valid) << facts->verification_error;
}

TEST_F(RealDataDir, AGarbageDatabaseIsCorrupt) {
  const auto size = fs::file_size(db_);
  std::mt19937 random(23);
  std::string garbage(size, '\0');
  for (char& byte : garbage) byte = static_cast<char>(random());
  std::ofstream(db_, std::ios::binary | std::ios::trunc) << garbage;

  auto facts = InspectDataDir(data_, 0, "");
  ASSERT_TRUE(facts.ok()) << facts.error().message;
  EXPECT_TRUE(facts->corrupt);
  EXPECT_FALSE(facts->valid);
  EXPECT_NE(facts->verification_error.find("invalid database"), std::string::npos)
      << facts->verification_error;
}

// All but the two meta pages gone: etcdctl crashes inside bbolt (SIGBUS
// reading a page past the end), which is a verdict on the file, not a
// failure to check it. (Halving the file is not always enough: the pages in
// use can all lie in the first half.)
TEST_F(RealDataDir, ATruncatedDatabaseIsCorrupt) {
  fs::resize_file(db_, 2 * static_cast<uintmax_t>(sysconf(_SC_PAGESIZE)));
  auto facts = InspectDataDir(data_, 0, "");
  ASSERT_TRUE(facts.ok()) << facts.error().message;
  EXPECT_TRUE(facts->corrupt) << facts->verification_error;
  EXPECT_FALSE(facts->valid);
}

// A disk that fails to read (issue 41, hazard 7): the database's pages past
// its two meta pages answer EIO, through FUSE. etcdctl crashes inside bbolt
// exactly as on a truncated file (SIGBUS on its memory map), but a file that
// cannot be read is no verdict: the inspection fails (kUnavailable) and the
// data directory stays. Before, it read as corrupt, to be moved aside and
// restored, which on a single member rolls writes back to the last backup.
TEST_F(RealDataDir, ADatabaseTheDiskCannotReadIsNotCorrupt) {
  if (!IoErrorMount::Available()) GTEST_SKIP() << "no /dev/fuse on this machine";
  const std::string snap = data_ + "/member/snap";
  fs::rename(snap, data_ + "/member/snap-readable");
  fs::create_directory(snap);
  const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  auto mount = IoErrorMount::Start(data_ + "/member/snap-readable/db", snap, "db", 2 * page,
                                   copies_.path() + "/io-error-fs.log");
  ASSERT_TRUE(mount.ok()) << mount.error().message;

  auto facts = InspectDataDir(data_, 0, "");
  ASSERT_FALSE(facts.ok()) << "read as a verdict: corrupt=" << facts->corrupt << " ("
                           << facts->verification_error << ")";
  EXPECT_EQ(facts.error().code, ErrorCode::kUnavailable) << facts.error().message;
  EXPECT_NE(facts.error().message.find("could not read " + db_ + ": Input/output error"), std::string::npos)
      << facts.error().message;
  EXPECT_NE(facts.error().message.find("SIGBUS"), std::string::npos)
      << "etcdctl faulted on the map, as on a truncated file: " << facts.error().message;
}

TEST_F(RealDataDir, WithoutEtcdctlTheDatabaseCouldNotBeCheckedAndIsNotCorrupt) {
  ScopedPath path(copies_.path());  // no etcdctl there
  auto facts = InspectDataDir(data_, 0, "");
  ASSERT_FALSE(facts.ok()) << "read as a verdict: corrupt=" << facts->corrupt << " ("
                           << facts->verification_error << ")";
  EXPECT_EQ(facts.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(facts.error().message.find("could not check"), std::string::npos) << facts.error().message;
}

}  // namespace
}  // namespace ruleplane::testing
