// S3Client: objects in one bucket of S3 or an S3-compatible store (MinIO,
// Dell ECS, OpenShift OCS), over libcurl, every request signed with AWS
// Signature V4 (platform/aws_sigv4.h). The transport under the snapshot
// store that keeps etcd backups in etcd-backup-restore's object layout
// (<prefix>/v2/Full-...); it knows nothing of that layout.
//
//   S3Config config{.endpoint = "http://127.0.0.1:9000", .region = "us-east-1", .bucket = "backups",
//                   .credentials = {"minio", "minio123", ""}};
//   auto client = S3Client::Create(config);
//   Status stored = (*client)->PutObjectFromFile("etcd-main/v2/Full-00000000-00000010-1700000000.gz", path);
//
// Errors, by what the caller should do (each names the bucket and key, and
// S3's error Code when the answer carries one): 401/403 kPermissionDenied
// (SignatureDoesNotMatch, InvalidAccessKeyId, AccessDenied); 404
// kNotFound (NoSuchKey, NoSuchBucket); 5xx, 429, SlowDown, RequestTimeout,
// connection failures kUnavailable; the request's time running out
// kDeadlineExceeded; a local file that cannot be read kIo; other 4xx
// kInvalidArgument.
//
// Bounds on what a server sends: listing pages, upload answers and error
// documents are held (at most the sizes in s3_client.cpp, each named in its
// error); object bodies are streamed to the caller and never held. Uploads
// hold no part in memory: each part is read from the file twice (once to
// hash it, once to send it), in pieces.
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
#include "platform/aws_sigv4.h"
#include "platform/http_client.h"

namespace ruleplane {

// How the bucket appears in a request's URL.
enum class S3Addressing {
  kAuto,           // virtual-hosted on AWS (no endpoint given), path-style with an endpoint
  kPathStyle,      // http://endpoint/bucket/key: MinIO, ECS, OCS (etcd-backup-restore's forcePathStyle)
  kVirtualHosted,  // http://bucket.endpoint/key
};

// Server-side encryption asked of the store for what it writes
// (etcd-backup-restore's sseCustomerKey / sseCustomerAlgorithm for SSE-C).
struct S3Encryption {
  enum class Kind {
    kNone,
    kS3,           // x-amz-server-side-encryption: AES256 (keys the store manages)
    kKms,          // x-amz-server-side-encryption: aws:kms, with kms_key_id ("" = the account's default key)
    kCustomerKey,  // SSE-C: the store encrypts with customer_key, which every read must send again
  };
  Kind kind = Kind::kNone;
  std::string kms_key_id;
  std::string customer_key;                   // the 32 raw bytes of the AES-256 key
  std::string customer_algorithm = "AES256";  // the only one S3 knows
};

// With ObjectTransferSettings' bounds on one request: request_timeout
// (HEAD, DELETE, a listing page, starting or finishing an upload),
// transfer_timeout (one part, one single-request upload, or one object
// read, whole) and low_speed_bytes_per_second.
struct S3Config : ObjectTransferSettings {
  // "https://s3.eu-west-1.amazonaws.com", "http://127.0.0.1:9000"; "" =
  // AWS's endpoint for `region`.
  std::string endpoint;
  std::string region = "us-east-1";
  std::string bucket;
  S3Addressing addressing = S3Addressing::kAuto;
  AwsCredentials credentials;
  S3Encryption encryption;
  TlsConfig tls;  // the CA to verify the store with, or insecure_skip_verify
  // The size of each part of a multipart upload, and the size from which a
  // file is uploaded in parts: S3's minimum part (5 MiB), as
  // etcd-backup-restore's minChunkSize. A file needing more than S3's
  // 10,000 parts gets larger parts (size / 10,000, as it does).
  int64_t part_size_bytes = int64_t{5} << 20;
  // Attempts at each part before the upload is abandoned (kUnavailable or
  // kDeadlineExceeded only), a second apart, then two, ...
  int part_attempts = 3;
  // The most keys ListObjects returns before it fails (a bound on memory).
  int64_t max_listed_keys = 1'000'000;
  // ListObjectsV2's max-keys (S3's default and most: 1000).
  int list_page_keys = 1000;
};

struct S3Object {
  std::string key;
  int64_t size = 0;
  std::string last_modified;  // as S3 lists it: "2024-01-02T03:04:05.000Z"
  std::string etag;           // without its quotes
};

struct S3ObjectInfo {
  int64_t size = 0;
  std::string last_modified;  // the Last-Modified header: "Tue, 02 Jan 2024 03:04:05 GMT"
  std::string etag;           // without its quotes
};

class S3Client {
 public:
  // kInvalidArgument for an unusable configuration: no bucket or access
  // key, an endpoint that is not http(s)://host[:port], a part size under
  // S3's 5 MiB, an SSE-C key that is not 32 bytes.
  static Result<std::unique_ptr<S3Client>> Create(S3Config config);

  // Stores the file at `path` under `key`: one PUT when it is smaller than
  // the part size, otherwise a multipart upload, part after part; when any
  // step fails the upload is aborted, so that no partial object appears.
  Status PutObjectFromFile(const std::string& key, const std::string& path);

  // The object's bytes, to `sink` as they arrive (false from the sink stops
  // the read: kIo "the sink refused"). A body shorter or longer than its
  // Content-Length is kUnavailable.
  Result<S3ObjectInfo> GetObjectToSink(const std::string& key,
                                       const std::function<bool(std::string_view)>& sink);

  // Every object whose key starts with `prefix`, in key order
  // (ListObjectsV2, page after page).
  Result<std::vector<S3Object>> ListObjects(const std::string& prefix);

  // Removes the object; removing a key that does not exist is not an error
  // (S3 answers 204 either way).
  Status DeleteObject(const std::string& key);

  // The object's size, ETag and time; kNotFound when it does not exist.
  Result<S3ObjectInfo> HeadObject(const std::string& key);

  const S3Config& config() const { return config_; }

 private:
  explicit S3Client(S3Config config);

  struct Call;
  Result<HttpResponse> Send(const Call& call);
  std::string What(std::string_view operation, const std::string& key) const;
  Status PutSingle(const std::string& key, int fd, int64_t size);
  Status PutMultipart(const std::string& key, int fd, int64_t size);
  Result<std::string> UploadPart(const std::string& key, const std::string& upload_id, int part_number,
                                 int fd, int64_t offset, int64_t size);
  Status AbortUpload(const std::string& key, const std::string& upload_id);

  S3Config config_;
  std::string scheme_;     // "http" or "https"
  std::string authority_;  // the endpoint's host[:port]
  bool path_style_ = true;
  HttpClient http_;
};

}  // namespace ruleplane
