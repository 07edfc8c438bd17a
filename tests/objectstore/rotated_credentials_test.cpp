// An S3 store opened once (OpenObjectStore, as member-agent and member-init
// open it) against a real S3 server (s3rver, which verifies every signature
// and answers 403 InvalidAccessKeyId for a revoked key): its credentials
// directory rewritten with a second key pair and the first key revoked on
// the server, as a Secret rotation does.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "adapters/object_store/store_config.h"
#include "tests/support/s3_server.h"
#include "tests/support/temp_dir.h"

namespace ruleplane {
namespace {

using testing::S3Server;
using testing::TempDir;

void WriteCredentials(const std::string& directory, const AwsCredentials& key) {
  std::filesystem::create_directories(directory);
  std::ofstream(directory + "/accessKeyID", std::ios::trunc) << key.access_key_id;
  std::ofstream(directory + "/secretAccessKey", std::ios::trunc) << key.secret_access_key;
  std::ofstream(directory + "/region", std::ios::trunc) << "us-east-1";
}

Status WriteObject(ObjectStore& store, const std::string& key, const std::string& bytes) {
  return store.Write(key, [&](const ChunkSink& sink) { return sink(bytes); });
}

TEST(RotatedCredentials, AnOpenS3StoreUsesTheNewKeyPairOnceTheOldOneIsRevoked) {
  TempDir dir("rotated-credentials");
  auto server = S3Server::Start(dir.path(), {"backups"});
  ASSERT_TRUE(server.ok()) << server.error().message;
  const std::string credentials = dir.path() + "/credentials";
  const AwsCredentials first = S3Server::Credentials(), second = {"ROTATED2", "second-secret-key", ""};
  WriteCredentials(credentials, first);
  StoreConfig config{.provider = "S3",
                     .container = "backups",
                     .prefix = "etcd-main",
                     .endpoint_override = (*server)->endpoint(),
                     .credentials = credentials,
                     .scratch_directory = dir.path()};
  auto store = OpenObjectStore(config);
  ASSERT_TRUE(store.ok()) << store.error().message;
  ASSERT_TRUE(WriteObject(**store, "v2/before", "written with the first key").ok());

  // The rotation: the new pair is issued, the Secret (the directory) says
  // it, the old key is revoked. All within one second: the files'
  // modification times cannot tell.
  ASSERT_TRUE((*server)->SetAccessKeys({first, second}).ok());
  WriteCredentials(credentials, second);
  ASSERT_TRUE((*server)->SetAccessKeys({second}).ok());

  auto listing = (*store)->List();
  ASSERT_TRUE(listing.ok()) << listing.error().message;
  EXPECT_EQ(listing->objects.size(), 1u);
  Status written = WriteObject(**store, "v2/after", "written with the second key");
  ASSERT_TRUE(written.ok()) << written.error().message;
  std::string read;
  Status read_back = (*store)->Read("v2/after", [&](std::string_view chunk) {
    read.append(chunk);
    return Status{};
  });
  ASSERT_TRUE(read_back.ok()) << read_back.error().message;
  EXPECT_EQ(read, "written with the second key");

  // A key revoked with nothing new to read: refused, said so, and no loop.
  ASSERT_TRUE((*server)->SetAccessKeys({first}).ok());
  auto refused = (*store)->List();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kPermissionDenied) << refused.error().message;
}

}  // namespace
}  // namespace ruleplane
