// etcd's backups in S3, end to end with real etcd members and a real
// S3-compatible server that verifies Signature V4 (s3rver): `ruleplane
// backup` takes a full snapshot and deltas into the bucket in
// etcd-backup-restore's layout and naming, the quorum is lost, and
// member-init restores the first member from the bucket (full snapshot and
// the deltas replayed) while the others join. The credentials are a
// directory of files, as etcd-druid mounts spec.backup.store.secretRef.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/run_ruleplane.h"
#include "tests/support/member_harness.h"
#include "tests/support/object_store_files.h"
#include "tests/support/s3_server.h"

namespace ruleplane::testing {
namespace {

namespace fs = std::filesystem;

class S3MemberInit : public ::testing::Test, protected MemberHarness {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Create(3, "s3-member-init").ok());
    auto server = S3Server::Start(root_->path() + "/s3", {"backups"});
    ASSERT_TRUE(server.ok()) << server.error().message;
    server_ = std::move(*server);
    const std::string credentials = root_->path() + "/credentials";
    fs::create_directories(credentials);
    const AwsCredentials keys = S3Server::Credentials();
    std::ofstream(credentials + "/accessKeyID") << keys.access_key_id;
    std::ofstream(credentials + "/secretAccessKey") << keys.secret_access_key;
    std::ofstream(credentials + "/region") << "us-east-1";
    std::ofstream(credentials + "/s3ForcePathStyle") << "true";
    store_config_.provider = "S3";
    store_config_.container = "backups";
    store_config_.endpoint_override = server_->endpoint();
    store_config_.credentials = credentials;
    store_config_.scratch_directory = root_->path() + "/scratch";
  }

  // The keys in the bucket, as boto3 (an independent client) lists them.
  std::vector<std::string> KeysByBoto3() const {
    const AwsCredentials keys = S3Server::Credentials();
    const std::string script =
        "import boto3\n"
        "s3 = boto3.client('s3', endpoint_url='" +
        server_->endpoint() + "', aws_access_key_id='" + keys.access_key_id + "', aws_secret_access_key='" +
        keys.secret_access_key +
        "', region_name='us-east-1')\n"
        "for page in s3.get_paginator('list_objects_v2').paginate(Bucket='backups'):\n"
        "    for item in page.get('Contents', []): print(item['Key'])\n";
    const std::string path = root_->path() + "/list.py";
    std::ofstream(path) << script;
    const Outcome listed = Shell(PythonWithBoto3() + " " + path);
    EXPECT_EQ(listed.exit_code, 0) << listed.err;
    std::vector<std::string> lines;
    std::istringstream in(listed.out);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  std::unique_ptr<S3Server> server_;
};

TEST_F(S3MemberInit, AfterQuorumLossTheFirstMemberRestoresFromS3AndTheOthersJoin) {
  RebuildAfterQuorumLoss(2);
  if (HasFatalFailure()) return;
  // etcd-backup-restore's object names, under the prefix: the backups, and
  // the full snapshot the restored member uploaded once its replay was
  // verified, at the last delta's revision. Nothing on its way in left behind.
  const std::vector<std::string> keys = KeysByBoto3();
  std::vector<std::string> fulls, deltas;
  for (const std::string& key : keys) {
    EXPECT_TRUE(key.starts_with("etcd-main/v2/") || key.starts_with("etcd-main/clusters/")) << key;
    if (key.rfind("etcd-main/v2/Full-00000000-", 0) == 0) fulls.push_back(key.substr(27, 8));
    if (key.rfind("etcd-main/v2/Incr-", 0) == 0) deltas.push_back(key.substr(27, 8));
  }
  ASSERT_EQ(fulls.size(), 2u) << ::testing::PrintToString(keys);
  ASSERT_EQ(deltas.size(), 2u) << ::testing::PrintToString(keys);
  EXPECT_EQ(*std::max_element(fulls.begin(), fulls.end()), *std::max_element(deltas.begin(), deltas.end()))
      << ::testing::PrintToString(keys);
  EXPECT_TRUE(fs::is_empty(store_config_.scratch_directory)) << "a staged upload or download was left";
  EXPECT_FALSE(fs::exists(store_)) << "nothing went to a local store";
}

// A full snapshot that another tool wrote in etcd-backup-restore's naming
// (etcdctl's snapshot, gzipped and uploaded by boto3 as
// <prefix>/v2/Full-00000000-<revision>-<unix>.gz) is what the first member
// restores after the quorum is lost.
TEST_F(S3MemberInit, AFullSnapshotUploadedByAnotherClientIsRestored) {
  ASSERT_NO_FATAL_FAILURE(Bootstrap());
  NumberedWriter writer(cluster_->ClientUrls(), "boto3/");
  ASSERT_TRUE(writer.WriteSome(30).ok());
  const std::string db = root_->path() + "/etcdctl.db";
  const Outcome saved =
      Shell("ETCDCTL_API=3 etcdctl --endpoints " + cluster_->member(0).client_url + " snapshot save " + db);
  ASSERT_EQ(saved.exit_code, 0) << saved.out << saved.err;
  const int64_t revision = writer.acknowledged().back().revision;
  char name[96];
  std::snprintf(name, sizeof name, "etcd-main/v2/Full-00000000-%08lld-%lld.gz",
                static_cast<long long>(revision), static_cast<long long>(std::time(nullptr)));
  const AwsCredentials keys = S3Server::Credentials();
  const std::string script =
      "import boto3, gzip, shutil\n"
      "with open('" +
      db + "', 'rb') as raw, gzip.open('" + db +
      ".gz', 'wb') as packed:\n"
      "    shutil.copyfileobj(raw, packed)\n"
      "s3 = boto3.client('s3', endpoint_url='" +
      server_->endpoint() + "', aws_access_key_id='" + keys.access_key_id + "', aws_secret_access_key='" +
      keys.secret_access_key +
      "', region_name='us-east-1')\n"
      "s3.upload_file('" +
      db + ".gz', 'backups', '" + name + "')\n";
  std::ofstream(root_->path() + "/upload.py") << script;
  const Outcome uploaded = Shell(PythonWithBoto3() + " " + root_->path() + "/upload.py");
  ASSERT_EQ(uploaded.exit_code, 0) << uploaded.err;

  for (int i = 0; i < 3; ++i) {
    cluster_->StopMember(i);
    fs::rename(DataDir(i), DataDir(i) + ".lost-by-test");
  }
  const std::string marker = std::to_string(revision) + ":auto";
  const Outcome first = MemberInitOf(0, WriteEtcd(0, {}, marker));
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_NE(first.out.find("first-member-restore"), std::string::npos) << first.out;
  ASSERT_TRUE(cluster_->StartMemberWithConfig(0, Config(0)).ok());
  ASSERT_TRUE(cluster_->WaitReady(0).ok()) << cluster_->member(0).log_path;
  for (int i = 1; i < 3; ++i) {
    const Outcome following = MemberInitOf(i, WriteEtcd(i, StatusOfCluster(), marker));
    ASSERT_EQ(following.exit_code, 0) << following.out << following.err;
    ASSERT_TRUE(cluster_->StartMemberWithConfig(i, Config(i)).ok());
    ASSERT_TRUE(cluster_->WaitReady(i).ok()) << cluster_->member(i).log_path;
  }
  ExpectHealthyCluster();
  ExpectNoKeyLost(writer, revision);
}

TEST_F(S3MemberInit, AWrongSecretIsRefusedByTheServerAndNothingIsStored) {
  ASSERT_NO_FATAL_FAILURE(Bootstrap());
  std::ofstream(store_config_.credentials + "/secretAccessKey", std::ios::trunc) << "not-the-secret";
  const Outcome refused = Backup("full");
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("SignatureDoesNotMatch"), std::string::npos) << refused.err;
  // The first object a full snapshot writes is its cluster marker.
  EXPECT_NE(refused.err.find("s3://backups/etcd-main/clusters/"), std::string::npos) << refused.err;
  EXPECT_TRUE(KeysByBoto3().empty());
  EXPECT_TRUE(fs::is_empty(store_config_.scratch_directory)) << "the download was left behind";
}

}  // namespace
}  // namespace ruleplane::testing
