// etcd's backups in Azure Blob Storage, end to end with real etcd members
// and a real Azure Blob emulator that verifies Shared Key signatures
// (Azurite): `ruleplane backup` takes a full snapshot and deltas into the
// container in etcd-backup-restore's layout and naming, the quorum is lost,
// and member-init restores the first member from the container (full
// snapshot and the deltas replayed) while the others join. The credentials
// are a directory of files (storageAccount, storageKey), as etcd-druid
// mounts spec.backup.store.secretRef for ABS; the emulator is reached through
// --store-endpoint-override, as etcd-backup-restore reaches it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tests/run_ruleplane.h"
#include "tests/support/azurite_server.h"
#include "tests/support/member_harness.h"

namespace ruleplane::testing {
namespace {

namespace fs = std::filesystem;

class AbsMemberInit : public ::testing::Test, protected MemberHarness {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Create(3, "abs-member-init").ok());
    auto server = AzuriteServer::Start(root_->path() + "/azurite", {"backups"});
    ASSERT_TRUE(server.ok()) << server.error().message;
    server_ = std::move(*server);
    const std::string credentials = root_->path() + "/credentials";
    fs::create_directories(credentials);
    std::ofstream(credentials + "/storageAccount") << AzuriteServer::kAccount;
    std::ofstream(credentials + "/storageKey") << AzuriteServer::kKey;
    store_config_.provider = "ABS";
    store_config_.container = "backups";
    store_config_.endpoint_override = server_->endpoint();
    store_config_.credentials = credentials;
    store_config_.scratch_directory = root_->path() + "/scratch";
  }

  // The blobs in the container, as curl (an independent, anonymous reader) lists them.
  std::vector<std::string> BlobsByCurl() {
    auto names = server_->ListWithCurl("backups");
    EXPECT_TRUE(names.ok()) << names.error().message;
    return names.ok() ? *names : std::vector<std::string>{};
  }

  std::unique_ptr<AzuriteServer> server_;
};

TEST_F(AbsMemberInit, AfterQuorumLossTheFirstMemberRestoresFromAbsAndTheOthersJoin) {
  RebuildAfterQuorumLoss(2);
  if (HasFatalFailure()) return;
  // etcd-backup-restore's blob names, under the prefix: the backups, and
  // the full snapshot the restored member uploaded once its replay was
  // verified, at the last delta's revision. Nothing on its way in left behind.
  const std::vector<std::string> names = BlobsByCurl();
  std::vector<std::string> fulls, deltas;
  for (const std::string& name : names) {
    EXPECT_TRUE(name.starts_with("etcd-main/v2/") || name.starts_with("etcd-main/clusters/")) << name;
    if (name.rfind("etcd-main/v2/Full-00000000-", 0) == 0) fulls.push_back(name.substr(27, 8));
    if (name.rfind("etcd-main/v2/Incr-", 0) == 0) deltas.push_back(name.substr(27, 8));
  }
  ASSERT_EQ(fulls.size(), 2u) << ::testing::PrintToString(names);
  ASSERT_EQ(deltas.size(), 2u) << ::testing::PrintToString(names);
  EXPECT_EQ(*std::max_element(fulls.begin(), fulls.end()), *std::max_element(deltas.begin(), deltas.end()))
      << ::testing::PrintToString(names);
  EXPECT_TRUE(fs::is_empty(store_config_.scratch_directory)) << "a staged upload or download was left";
  EXPECT_FALSE(fs::exists(store_)) << "nothing went to a local store";
}

TEST_F(AbsMemberInit, AWrongKeyIsRefusedByTheServerAndNothingIsStored) {
  ASSERT_NO_FATAL_FAILURE(Bootstrap());
  std::ofstream(store_config_.credentials + "/storageKey", std::ios::trunc)
      << "bm90LXRoZS1rZXktbm90LXRoZS1rZXktbm90LXRoZS1rZXk=";
  const Outcome refused = Backup("full");
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  // Azurite's answer to a signature that differs (Azure's: AuthenticationFailed).
  EXPECT_NE(refused.err.find("HTTP 403 AuthorizationFailure"), std::string::npos) << refused.err;
  // The first object a full snapshot writes is its cluster marker.
  EXPECT_NE(refused.err.find(server_->endpoint() + "/backups/etcd-main/clusters/"), std::string::npos)
      << refused.err;
  EXPECT_TRUE(BlobsByCurl().empty());
  EXPECT_TRUE(fs::is_empty(store_config_.scratch_directory)) << "the download was left behind";
}

}  // namespace
}  // namespace ruleplane::testing
