// AzureBlobClient: block blobs in one container of Azure Blob Storage (or
// an emulator such as Azurite), over libcurl, every request authorized with
// the account's Shared Key (platform/azure_shared_key.h). The transport
// under the snapshot store that keeps etcd backups in etcd-backup-restore's
// object layout (<prefix>/v2/Full-...); it knows nothing of that layout.
//
//   AzureBlobConfig config{.account = "devstoreaccount1", .key = "Eby8...==", .container = "backups",
//                          .endpoint = "http://127.0.0.1:10000/devstoreaccount1"};
//   auto client = AzureBlobClient::Create(config);
//   Status stored = (*client)->PutBlobFromFile("etcd-main/v2/Full-00000000-00000010-1700000000.gz", path);
//
// Uploads: a file smaller than the block size is one Put Blob; a larger one
// is staged block after block (Put Block, each read from the file in pieces
// and never held, with its Content-MD5 so that the service refuses bytes
// changed on the way), then committed with Put Block List. Staged blocks
// are never visible: until the commit no blob appears, and after a failed
// upload none does (the service discards uncommitted blocks; the next
// commit of the name replaces them). A block's ID is the base64 of
// "<upload>-<number>": 16 random hex digits of this upload, and the block's
// number as ten digits from 1 (etcd-backup-restore uses the number alone), so
// that two uploaders of one name never commit each other's blocks.
//
// Errors, by what the caller should do (each names the container's URL and
// the blob, and Azure's error code when the answer carries one): 401/403
// kPermissionDenied (AuthenticationFailed, AuthorizationFailure); 404
// kNotFound (BlobNotFound, ContainerNotFound); 409 and 412 kConflict; 5xx,
// 429, ServerBusy, OperationTimedOut and connection failures kUnavailable;
// the request's time running out kDeadlineExceeded; a local file that
// cannot be read kIo; other 4xx kInvalidArgument.
//
// Bounds on what a server sends: listing pages, upload answers and error
// documents are held (at most the sizes in azure_blob_client.cpp, each
// named in its error); blob bodies are streamed to the caller.
//
// Not safe for concurrent use: one client, one request at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/object_store/object_transfer.h"
#include "engine/common/error.h"
#include "platform/http_client.h"

namespace ruleplane {

// With ObjectTransferSettings' bounds on one request: request_timeout (a
// listing page, a delete, a block list), transfer_timeout (one block, one
// single-request upload, or one blob read, whole) and
// low_speed_bytes_per_second.
struct AzureBlobConfig : ObjectTransferSettings {
  std::string account;  // the storage account's name
  std::string key;      // its access key, base64 as Azure shows it
  std::string container;
  // The account's blob endpoint, without the container:
  // "https://<account>.blob.core.windows.net" when "", or an emulator's
  // path-style "http://127.0.0.1:10000/devstoreaccount1".
  std::string endpoint;
  TlsConfig tls;
  // The size of each block, and the size from which a file is uploaded in
  // blocks: etcd-backup-restore's default chunk (5 MiB). A file needing
  // more than the service's 50,000 blocks gets larger blocks.
  int64_t block_size_bytes = int64_t{5} << 20;
  // Attempts at each block before the upload is abandoned (kUnavailable or
  // kDeadlineExceeded only), a second apart, then two, ...
  int block_attempts = 3;
  // The most blobs ListBlobs returns before it fails (a bound on memory).
  int64_t max_listed_blobs = 1'000'000;
  // List Blobs' maxresults (the service's default and most: 5000).
  int list_page_results = 5000;
};

struct AzureBlob {
  std::string name;
  int64_t size = 0;
  std::string last_modified;  // as listed: "Tue, 02 Jan 2024 03:04:05 GMT"
  std::string etag;
};

class AzureBlobClient {
 public:
  // The x-ms-version every request is sent with.
  static constexpr std::string_view kApiVersion = "2021-08-06";

  // kInvalidArgument for an unusable configuration: no account, key or
  // container, a key that is not base64, an endpoint that is not
  // http(s)://host[:port][/path], a block size outside 64 KiB to 4000 MiB.
  static Result<std::unique_ptr<AzureBlobClient>> Create(AzureBlobConfig config);

  // Stores the file at `path` as the block blob `blob`, replacing any blob
  // of that name only once the whole file is stored.
  Status PutBlobFromFile(const std::string& blob, const std::string& path);

  // The blob's bytes, to `sink` as they arrive (false from the sink stops
  // the read: kIo "the sink refused"); its size. A body shorter or longer
  // than its Content-Length is kUnavailable.
  Result<int64_t> GetBlobToSink(const std::string& blob, const std::function<bool(std::string_view)>& sink);

  // Every committed blob whose name starts with `prefix`, in name order
  // (List Blobs, page after page, following NextMarker).
  Result<std::vector<AzureBlob>> ListBlobs(const std::string& prefix);

  // Removes the blob; removing one that does not exist is not an error (a
  // container that does not exist is kNotFound).
  Status DeleteBlob(const std::string& blob);

  const AzureBlobConfig& config() const { return config_; }
  // "https://account.blob.core.windows.net/backups": where the blobs are, for messages.
  std::string ContainerUrl() const { return endpoint_ + "/" + config_.container; }

 private:
  explicit AzureBlobClient(AzureBlobConfig config);

  struct Call;
  Result<HttpResponse> Send(const Call& call);
  std::string What(std::string_view operation, const std::string& blob) const;
  Status PutSingle(const std::string& blob, int fd, int64_t size);
  Status PutBlocks(const std::string& blob, int fd, int64_t size);
  Status PutBlock(const std::string& blob, const std::string& block_id, int number, int fd, int64_t offset,
                  int64_t size);

  AzureBlobConfig config_;
  std::string decoded_key_;
  std::string endpoint_;       // without a trailing '/'
  std::string endpoint_path_;  // its path: "" or "/devstoreaccount1"
  HttpClient http_;
};

}  // namespace ruleplane
