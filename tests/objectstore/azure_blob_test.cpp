// AzureBlobClient against a real Azure Blob emulator that verifies Shared
// Key signatures (Azurite, tests/support/azurite_server.h), each test with
// its own server in its own temporary directory, and against curl as an
// independent reader of the same server (anonymous listings of a public
// container: nothing of ruleplane's signer or client on that path).
#include "adapters/object_store/azure_blob_client.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "adapters/object_store/store_config.h"
#include "platform/base64.h"
#include "tests/support/azurite_server.h"
#include "tests/support/object_store_files.h"
#include "tests/support/s3_fault_proxy.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_helpers.h"

namespace ruleplane {
namespace {

using testing::AzuriteServer;
using testing::FileSha256Hex;
using testing::kRssIsMeaningful;
using testing::ProcStatusBytes;
using testing::ResetPeakRss;
using testing::S3FaultProxy;
using testing::TempDir;
using testing::WritePatternFile;

constexpr int64_t kMiB = 1 << 20;
const std::string kContainer = "backups";

// The block ID a PutBlock request line or target names, decoded ("3f2a...-0000000002"); "" for another
// request.
std::string BlockIdOf(const std::string& request) {
  const size_t at = request.find("blockid=");
  if (at == std::string::npos) return "";
  std::string id = request.substr(at + 8, request.find_first_of("& ", at) - at - 8);
  for (size_t escape; (escape = id.find("%3D")) != std::string::npos;) id.replace(escape, 3, "=");
  return Base64Decode(id).value_or("not base64: " + id);
}

class AzureBlobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = AzuriteServer::Start(dir_.path(), {kContainer});
    ASSERT_TRUE(server.ok()) << server.error().message;
    server_ = std::move(*server);
  }

  AzureBlobConfig Config(const std::string& endpoint = "") const {
    AzureBlobConfig config;
    config.account = AzuriteServer::kAccount;
    config.key = AzuriteServer::kKey;
    config.container = kContainer;
    config.endpoint = endpoint.empty() ? server_->endpoint() : endpoint;
    config.request_timeout = std::chrono::seconds(20);
    config.transfer_timeout = std::chrono::seconds(120);
    return config;
  }

  std::unique_ptr<AzureBlobClient> Client(const AzureBlobConfig& config) const {
    auto client = AzureBlobClient::Create(config);
    EXPECT_TRUE(client.ok()) << client.error().message;
    return client.ok() ? std::move(*client) : nullptr;
  }

  Result<std::string> Get(AzureBlobClient& client, const std::string& blob) const {
    std::string bytes;
    auto size = client.GetBlobToSink(blob, [&](std::string_view data) {
      bytes.append(data);
      return true;
    });
    if (!size.ok()) return size.error();
    return bytes;
  }

  std::string File(const std::string& name, int64_t size, uint32_t seed) const {
    const std::string path = dir_.path() + "/" + name;
    WritePatternFile(path, size, seed);
    return path;
  }

  std::vector<std::string> ListedByCurl() {
    auto names = server_->ListWithCurl(kContainer);
    EXPECT_TRUE(names.ok()) << names.error().message;
    return names.ok() ? *names : std::vector<std::string>{};
  }

  // The endpoint of a proxy in front of the server (the account's path after it).
  std::string Through(const S3FaultProxy& proxy) const {
    return proxy.endpoint() + "/" + AzuriteServer::kAccount;
  }

  // A client through `proxy` that uploads in 5 MiB blocks, each tried `attempts` times.
  std::unique_ptr<AzureBlobClient> BlockClientThrough(const S3FaultProxy& proxy, int attempts) const {
    AzureBlobConfig config = Config(Through(proxy));
    config.block_size_bytes = 5 * kMiB;
    config.block_attempts = attempts;
    return Client(config);
  }

  TempDir dir_{"azure-blob"};
  std::unique_ptr<AzuriteServer> server_;
};

TEST_F(AzureBlobTest, PutGetListDeleteRoundTrip) {
  auto client = Client(Config());
  ASSERT_NE(client, nullptr);
  const std::string blob = "etcd-main/v2/Full-00000000-00000010-1700000000.gz";
  const std::string path = File("snapshot", 100'000, 1);
  Status stored = client->PutBlobFromFile(blob, path);
  ASSERT_TRUE(stored.ok()) << stored.error().message;

  auto bytes = Get(*client, blob);
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  EXPECT_EQ(*bytes, testing::Slurp(path));

  auto listed = client->ListBlobs("etcd-main/");
  ASSERT_TRUE(listed.ok()) << listed.error().message;
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].name, blob);
  EXPECT_EQ((*listed)[0].size, 100'000);
  EXPECT_FALSE((*listed)[0].etag.empty());
  EXPECT_FALSE((*listed)[0].last_modified.empty());
  EXPECT_EQ(ListedByCurl(), std::vector<std::string>{blob});

  // An empty file is a blob too.
  ASSERT_TRUE(client->PutBlobFromFile("etcd-main/v2/empty", File("empty", 0, 2)).ok());
  auto empty = Get(*client, "etcd-main/v2/empty");
  ASSERT_TRUE(empty.ok()) << empty.error().message;
  EXPECT_EQ(*empty, "");
  ASSERT_TRUE(client->DeleteBlob("etcd-main/v2/empty").ok());

  ASSERT_TRUE(client->DeleteBlob(blob).ok());
  auto missing = Get(*client, blob);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_NE(missing.error().message.find("BlobNotFound"), std::string::npos) << missing.error().message;
  EXPECT_NE(missing.error().message.find(server_->endpoint() + "/backups/" + blob), std::string::npos)
      << missing.error().message;
  auto none = client->ListBlobs("etcd-main/");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  EXPECT_TRUE(ListedByCurl().empty());
  // Deleting what is not there is not an error; a container that is not there is.
  EXPECT_TRUE(client->DeleteBlob(blob).ok());
  AzureBlobConfig elsewhere = Config();
  elsewhere.container = "no-such-container";
  auto other = Client(elsewhere);
  ASSERT_NE(other, nullptr);
  Status gone = other->DeleteBlob(blob);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, ErrorCode::kNotFound);
  EXPECT_NE(gone.error().message.find("ContainerNotFound"), std::string::npos) << gone.error().message;
}

TEST_F(AzureBlobTest, ABlockUploadComesBackWholeAndHoldsAboutOneBlockInMemory) {
  // A proxy that fails nothing, to see the requests.
  auto proxy =
      S3FaultProxy::Start(server_->port(), [](const std::string&, const std::string&) { return false; });
  ASSERT_TRUE(proxy.ok()) << proxy.error().message;
  AzureBlobConfig config = Config(Through(**proxy));
  config.block_size_bytes = 5 * kMiB;
  auto client = Client(config);
  ASSERT_NE(client, nullptr);
  const int64_t size = 17 * kMiB + 12345;
  const std::string path = File("large", size, 7);
  const std::string blob = "etcd-main/v2/Full-00000000-00001000-1700000000";

  // Measured without the proxy, which holds each request whole in this process.
  auto direct = Client(Config());
  ASSERT_NE(direct, nullptr);
  ASSERT_TRUE(ResetPeakRss());
  const int64_t before = ProcStatusBytes("VmRSS");
  const auto start = std::chrono::steady_clock::now();
  Status stored = direct->PutBlobFromFile(blob, path);
  const auto took = std::chrono::steady_clock::now() - start;
  const int64_t peak = ProcStatusBytes("VmHWM");
  ASSERT_TRUE(stored.ok()) << stored.error().message;
  const int64_t growth = peak - before;
  std::printf("block upload of %.1f MiB in 5 MiB blocks: %lld ms, peak RSS growth %.2f MiB (peak %.1f MiB)\n",
              static_cast<double>(size) / kMiB,
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()),
              static_cast<double>(growth) / kMiB, static_cast<double>(peak) / kMiB);
  // Holding the file (17 MiB) or even one block (5 MiB) would show here.
  EXPECT_TRUE(!kRssIsMeaningful || growth < 4 * kMiB) << growth << " bytes";

  // The same file again through the proxy, twice: the requests of a block
  // upload, each block's ID "<upload>-<number>" with the upload's own part.
  std::vector<std::string> block_ids;
  int commits = 0, single = 0;
  for (int upload = 0; upload < 2; ++upload) {
    ASSERT_TRUE(client->PutBlobFromFile(blob, path).ok());
  }
  for (const std::string& request : (*proxy)->requests()) {
    if (request.rfind("PUT ", 0) != 0) continue;
    if (const std::string id = BlockIdOf(request); !id.empty())
      block_ids.push_back(id);
    else if (request.find("comp=blocklist") != std::string::npos)
      ++commits;
    else
      ++single;
  }
  ASSERT_EQ(block_ids.size(), 8u);  // 5+5+5+2 MiB, twice
  const std::string first_upload = block_ids[0].substr(0, 17), second_upload = block_ids[4].substr(0, 17);
  EXPECT_NE(first_upload, second_upload);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(block_ids[i], (i < 4 ? first_upload : second_upload) + "000000000" + std::to_string(i % 4 + 1));
    EXPECT_EQ(block_ids[i].size(), 27u) << "every ID of a blob has the same length";
  }
  EXPECT_EQ(first_upload.back(), '-');
  EXPECT_EQ(commits, 2);
  EXPECT_EQ(single, 0);

  // Read back to a file: the sink holds nothing either.
  const std::string copy = dir_.path() + "/copy";
  std::ofstream out(copy, std::ios::binary);
  ASSERT_TRUE(ResetPeakRss());
  const int64_t before_read = ProcStatusBytes("VmRSS");
  auto read = direct->GetBlobToSink(blob, [&](std::string_view data) {
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    return static_cast<bool>(out);
  });
  const int64_t read_growth = ProcStatusBytes("VmHWM") - before_read;
  out.close();
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(*read, size);
  EXPECT_TRUE(!kRssIsMeaningful || read_growth < 4 * kMiB) << read_growth << " bytes";
  EXPECT_EQ(FileSha256Hex(copy), FileSha256Hex(path));
  auto listed = direct->ListBlobs("etcd-main/");
  ASSERT_TRUE(listed.ok()) << listed.error().message;
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].size, size);
}

TEST_F(AzureBlobTest, AWrongKeyIsPermissionDenied) {
  AzureBlobConfig config = Config();
  config.key = Base64Encode(std::string(64, 'k'));
  auto client = Client(config);
  ASSERT_NE(client, nullptr);
  const std::string blob = "etcd-main/v2/Full-00000000-00000010-1700000000";
  Status stored = client->PutBlobFromFile(blob, File("small", 1000, 3));
  ASSERT_FALSE(stored.ok());
  EXPECT_EQ(stored.error().code, ErrorCode::kPermissionDenied) << stored.error().message;
  // Azurite 3.35 answers a signature that differs with 403
  // AuthorizationFailure (its authentication middleware's answer); Azure
  // answers 403 AuthenticationFailed. Both are kPermissionDenied by status.
  EXPECT_NE(stored.error().message.find("HTTP 403 AuthorizationFailure"), std::string::npos)
      << stored.error().message;
  EXPECT_NE(stored.error().message.find("PutBlob " + server_->endpoint() + "/backups/" + blob),
            std::string::npos)
      << stored.error().message;
  auto listed = client->ListBlobs("etcd-main/");
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.error().code, ErrorCode::kPermissionDenied) << listed.error().message;
  EXPECT_TRUE(ListedByCurl().empty());
  // The right key works on the same server: the refusal was the signature's.
  auto right = Client(Config());
  ASSERT_NE(right, nullptr);
  EXPECT_TRUE(right->PutBlobFromFile(blob, dir_.path() + "/small").ok());
}

TEST_F(AzureBlobTest, AServerThatIsDownIsUnavailable) {
  const std::string endpoint = server_->endpoint();
  server_->Stop();
  auto client = Client(Config(endpoint));
  ASSERT_NE(client, nullptr);
  auto listed = client->ListBlobs("etcd-main/");
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.error().code, ErrorCode::kUnavailable) << listed.error().message;
  Status stored = client->PutBlobFromFile("etcd-main/v2/x", File("small", 1000, 4));
  ASSERT_FALSE(stored.ok());
  EXPECT_EQ(stored.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(stored.error().message.find(endpoint + "/backups/etcd-main/v2/x"), std::string::npos)
      << stored.error().message;
  EXPECT_TRUE(IsRetryable(stored.error().code));
}

TEST_F(AzureBlobTest, AListingLongerThanAPageFollowsTheMarkers) {
  auto proxy =
      S3FaultProxy::Start(server_->port(), [](const std::string&, const std::string&) { return false; });
  ASSERT_TRUE(proxy.ok()) << proxy.error().message;
  AzureBlobConfig config = Config(Through(**proxy));
  config.list_page_results = 3;
  auto client = Client(config);
  ASSERT_NE(client, nullptr);
  const std::string path = File("small", 10, 5);
  std::vector<std::string> names;
  for (int i = 0; i < 10; ++i) {
    char name[80];
    std::snprintf(name, sizeof name, "etcd-main/v2/Incr-%08d-%08d-17000000%02d.gz", i * 10 + 1, i * 10 + 10,
                  i);
    names.push_back(name);
    ASSERT_TRUE(client->PutBlobFromFile(name, path).ok());
  }
  ASSERT_TRUE(client->PutBlobFromFile("etcd-other/v2/Full-00000000-00000001-1700000000", path).ok());
  ASSERT_TRUE(client->PutBlobFromFile("etcd-mainly/v2/Full-00000000-00000001-1700000000", path).ok());

  auto listed = client->ListBlobs("etcd-main/");
  ASSERT_TRUE(listed.ok()) << listed.error().message;
  std::vector<std::string> got;
  for (const AzureBlob& blob : *listed) got.push_back(blob.name);
  EXPECT_EQ(got, names);
  int pages = 0, continued = 0;
  for (const std::string& request : (*proxy)->requests()) {
    if (request.find("comp=list") == std::string::npos) continue;
    ++pages;
    if (request.find("marker=") != std::string::npos) ++continued;
  }
  EXPECT_EQ(pages, 4);  // 3 + 3 + 3 + 1
  EXPECT_EQ(continued, 3);
  EXPECT_EQ(ListedByCurl().size(), 12u);
}

TEST_F(AzureBlobTest, AFailedBlockLeavesNoNewBlobAndTheOldOneWhole) {
  // Every attempt at block 2 fails as the service does when it cannot store one.
  auto proxy = S3FaultProxy::Start(server_->port(), [](const std::string& method, const std::string& target) {
    return method == "PUT" && BlockIdOf(target).ends_with("-0000000002");
  });
  ASSERT_TRUE(proxy.ok()) << proxy.error().message;
  auto client = BlockClientThrough(**proxy, 2);
  ASSERT_NE(client, nullptr);
  const std::string blob = "etcd-main/v2/Full-00000000-00002000-1700000000";
  const std::string fresh = "etcd-main/v2/Full-00000000-00003000-1700000000";
  // A blob of that name already there: it stays as it was.
  const std::string old_path = File("old", 1000, 8);
  ASSERT_TRUE(client->PutBlobFromFile(blob, old_path).ok());

  const std::string large = File("large", 12 * kMiB, 9);
  for (const std::string& name : {blob, fresh}) {
    Status stored = client->PutBlobFromFile(name, large);
    ASSERT_FALSE(stored.ok());
    EXPECT_EQ(stored.error().code, ErrorCode::kUnavailable) << stored.error().message;
    EXPECT_NE(stored.error().message.find("PutBlock " + Through(**proxy) + "/backups/" + name + " block 2"),
              std::string::npos)
        << stored.error().message;
    EXPECT_NE(stored.error().message.find("InternalError"), std::string::npos) << stored.error().message;
    EXPECT_NE(stored.error().message.find("abandoned"), std::string::npos) << stored.error().message;
  }
  EXPECT_EQ((*proxy)->failed(), 4);  // both attempts, both uploads
  for (const std::string& request : (*proxy)->requests()) {
    EXPECT_EQ(request.find("comp=blocklist"), std::string::npos) << request;
    EXPECT_FALSE(BlockIdOf(request).ends_with("-0000000003")) << "block 3 was sent: " << request;
  }

  auto direct = Client(Config());
  ASSERT_NE(direct, nullptr);
  auto missing = Get(*direct, fresh);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  auto old = Get(*direct, blob);
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_EQ(*old, testing::Slurp(old_path));
  EXPECT_EQ(ListedByCurl(), std::vector<std::string>{blob});
  auto listed = direct->ListBlobs("etcd-main/");
  ASSERT_TRUE(listed.ok()) << listed.error().message;
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].size, 1000);

  // A later upload of the same name, whole, replaces the staged blocks.
  ASSERT_TRUE(direct->PutBlobFromFile(fresh, large).ok());
  auto whole = Get(*direct, fresh);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  EXPECT_EQ(whole->size(), static_cast<size_t>(12 * kMiB));
}

// Two uploaders of one blob name (two agents that both think they lead): the
// second one's whole upload lands while the first is between its blocks 1
// and 2. With etcd-backup-restore's block IDs (the number alone) the first
// one's commit took the second one's block 1 with its own blocks 2 and 3, and
// reported a blob that is neither file as stored.
TEST_F(AzureBlobTest, TwoUploadersOfOneNameNeverPublishAMixOfTheirBlocks) {
  const std::string blob = "etcd-main/v2/Full-00000000-00004000-1700000000";
  const std::string mine = File("mine", 12 * kMiB, 21), theirs = File("theirs", 12 * kMiB, 22);
  auto direct = Client(Config());
  ASSERT_NE(direct, nullptr);
  Status their_upload = Error{ErrorCode::kInternal, "never ran", {}};
  // The proxy's hook runs before it passes the first uploader's block 2 on: the second uploader's whole
  // upload.
  auto proxy =
      S3FaultProxy::Start(server_->port(), [&](const std::string& method, const std::string& target) {
        if (method == "PUT" && BlockIdOf(target).ends_with("0000000002") && !their_upload.ok())
          their_upload = direct->PutBlobFromFile(blob, theirs);
        return false;
      });
  ASSERT_TRUE(proxy.ok()) << proxy.error().message;
  auto client = BlockClientThrough(**proxy, 1);
  ASSERT_NE(client, nullptr);

  const Status my_upload = client->PutBlobFromFile(blob, mine);
  ASSERT_TRUE(their_upload.ok()) << their_upload.error().message;
  auto stored = Get(*direct, blob);
  ASSERT_TRUE(stored.ok()) << stored.error().message;
  const std::string my_bytes = testing::Slurp(mine), their_bytes = testing::Slurp(theirs);
  if (my_upload.ok()) {
    EXPECT_TRUE(*stored == my_bytes)
        << "the first uploader was told its blob is stored, and it is not its file: "
        << (stored->substr(0, 5 * kMiB) == their_bytes.substr(0, 5 * kMiB) ? "block 1 is the other uploader's"
                                                                           : "another mix");
  } else {
    EXPECT_TRUE(*stored == their_bytes) << "a failed upload left a blob that is not the other one's whole";
    EXPECT_NE(my_upload.error().message.find("abandoned"), std::string::npos) << my_upload.error().message;
  }
}

TEST(AzureBlobConfigTest, UnusableConfigurationsAreRefusedWhereTheyEnter) {
  AzureBlobConfig good;
  good.account = "acct";
  good.key = AzuriteServer::kKey;
  good.container = "backups";
  auto client = AzureBlobClient::Create(good);
  ASSERT_TRUE(client.ok()) << client.error().message;
  EXPECT_EQ((*client)->ContainerUrl(), "https://acct.blob.core.windows.net/backups");
  const std::vector<std::pair<std::function<void(AzureBlobConfig&)>, std::string>> bad = {
      {[](AzureBlobConfig& c) { c.account = ""; }, "no storage account"},
      {[](AzureBlobConfig& c) { c.key = ""; }, "no storage account key"},
      {[](AzureBlobConfig& c) { c.key = "not base64!"; }, "not base64"},
      {[](AzureBlobConfig& c) { c.container = ""; }, "no container"},
      {[](AzureBlobConfig& c) { c.endpoint = "ftp://host"; }, "ftp://host"},
      {[](AzureBlobConfig& c) { c.endpoint = "http://h/a b"; }, "a b"},
      {[](AzureBlobConfig& c) { c.block_size_bytes = 1000; }, "block size"},
  };
  for (const auto& [change, expected] : bad) {
    AzureBlobConfig config = good;
    change(config);
    auto refused = AzureBlobClient::Create(config);
    ASSERT_FALSE(refused.ok()) << expected;
    EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument) << refused.error().message;
    EXPECT_NE(refused.error().message.find(expected), std::string::npos) << refused.error().message;
  }
}

TEST(AzureBlobConfigTest, EtcdBackupRestoresCredentialFilesAndEndpoints) {
  TempDir dir("abs-credentials");
  const std::string files = dir.path() + "/files";
  testing::Put(files + "/storageAccount", "acct\n");
  testing::Put(files + "/storageKey", std::string(AzuriteServer::kKey) + "\n");
  StoreConfig store;
  store.provider = "ABS";
  store.container = "backups";
  store.prefix = "etcd-main";
  store.credentials = files;
  auto config = ReadAbsConfig(store);
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->account, "acct");
  EXPECT_EQ(config->key, AzuriteServer::kKey);
  EXPECT_EQ(config->container, "backups");
  EXPECT_EQ(config->endpoint, "");  // Azure's own: https://acct.blob.core.windows.net

  // The (deprecated) domain file, and the endpoint override that wins over it.
  testing::Put(files + "/domain", "blob.core.chinacloudapi.cn");
  config = ReadAbsConfig(store);
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->endpoint, "https://acct.blob.core.chinacloudapi.cn");
  store.endpoint_override = "http://127.0.0.1:10000/devstoreaccount1";
  config = ReadAbsConfig(store);
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->endpoint, "http://127.0.0.1:10000/devstoreaccount1");

  // The JSON form, a file or a *.json file in the directory (which then wins).
  const std::string json = dir.path() + "/json";
  testing::Put(json + "/storageAccount", "ignored");
  testing::Put(json + "/credentials.json", "{\"storageAccount\": \"jsonacct\", \"storageKey\": \"" +
                                               std::string(AzuriteServer::kKey) +
                                               "\", \"bucketName\": \"unused\"}");
  store.endpoint_override = "";
  store.credentials = json;
  config = ReadAbsConfig(store);
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->account, "jsonacct");
  store.credentials = json + "/credentials.json";
  config = ReadAbsConfig(store);
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->account, "jsonacct");

  // A missing key is refused naming it; so is a provider still unsupported.
  std::filesystem::remove(files + "/storageKey");
  store.credentials = files;
  auto refused = ReadAbsConfig(store);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("storageKey"), std::string::npos) << refused.error().message;
  auto opened = OpenObjectStore(store);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.error().code, ErrorCode::kInvalidArgument);
  store.provider = "GCS";
  opened = OpenObjectStore(store);
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.error().message.find("GCS is not supported"), std::string::npos) << opened.error().message;
}

}  // namespace
}  // namespace ruleplane
