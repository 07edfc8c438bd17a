// What the object-store clients (S3Client, AzureBlobClient) share of moving
// bytes to and from a bucket, apart from signing and each service's
// documents: the bounds on one request, a file opened for upload and read
// in ranges, a request (its body a string or a range of that file) sent
// within those bounds once signed, the retries of one part or
// block, the sink that counts what it is given, and the reading of a
// server's answers (sizes, text fit for a message, the error a status
// means).
//
//   auto file = UploadFile::Open(path, What("PutObject", key));
//   Status sent = RetryTransfer(config_.part_attempts, [&]() -> Status { ... one attempt ... });
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/common/error.h"
#include "platform/http_client.h"

namespace ruleplane {

// The bounds on one request, the same for every provider (S3Config and
// AzureBlobConfig are ones).
struct ObjectTransferSettings {
  // One short request (HEAD, DELETE, a listing page, starting or finishing
  // an upload, a block list).
  std::chrono::milliseconds request_timeout{std::chrono::seconds(30)};
  // One part or block, one single-request upload, or one object read, whole.
  std::chrono::milliseconds transfer_timeout{std::chrono::hours(1)};
  // A transfer slower than this on average over a minute fails early.
  long low_speed_bytes_per_second = 1024;
};

// One request to a bucket as a client describes it before it is signed
// (each client's Call adds the object's name and its signing's fields).
struct ObjectCall {
  std::string method;
  std::vector<std::pair<std::string, std::string>> query;
  std::vector<std::pair<std::string, std::string>> headers;  // signed and sent
  std::string body;
  // Or a range of a file, read from it while it is sent.
  int fd = -1;
  int64_t offset = 0;
  int64_t size = 0;
  std::function<bool(std::string_view)> on_data;
  bool transfer = false;  // a part, a block or an object: transfer_timeout and the low-speed bound
  HttpLimits limits;

  int64_t body_size() const { return fd >= 0 ? size : static_cast<int64_t>(body.size()); }
};

// Sends `call` to `exchange`'s URL with its headers (signed by the caller):
// its method, body (or file range), sink and limits, and the settings'
// timeout (transfer_timeout and the low-speed bound for a transfer, else
// request_timeout). A transport failure keeps its code and is named by
// `what` ("PUT s3://bucket/key: ...").
Result<HttpResponse> ExchangeWithin(HttpClient& http, HttpExchange exchange, const ObjectCall& call,
                                    const ObjectTransferSettings& settings, const std::string& what);

// Runs `once` up to `attempts` times while it fails with kUnavailable or
// kDeadlineExceeded, a second apart, then two, ...; the last error, with
// "(attempt n of m)" when more than one was allowed.
Status RetryTransfer(int attempts, const std::function<Status()>& once);

// A local file opened to be uploaded, and its size; closed when it goes.
class UploadFile {
 public:
  // kIo (or OpenRegularFile's code) naming `what`: "PutObject s3://b/k: the file to upload: ...".
  static Result<UploadFile> Open(const std::string& path, const std::string& what);
  UploadFile(UploadFile&& other) noexcept : fd_(other.fd_), size_(other.size_) { other.fd_ = -1; }
  UploadFile& operator=(UploadFile&&) = delete;
  UploadFile(const UploadFile&) = delete;
  ~UploadFile();
  int fd() const { return fd_; }
  int64_t size() const { return size_; }

 private:
  UploadFile(int fd, int64_t size) : fd_(fd), size_(size) {}
  int fd_;
  int64_t size_;
};

// Reads [offset, offset + size) of `fd` in pieces of 256 KiB to `piece`
// (to hash a part before it is sent); kIo naming `what` when the file
// cannot be read or is shorter than when the upload began.
Status ReadFileRange(int fd, int64_t offset, int64_t size, const std::string& what,
                     const std::function<void(std::string_view)>& piece);

// A caller's sink for an object's body, counting what it is given.
class CountingSink {
 public:
  explicit CountingSink(const std::function<bool(std::string_view)>& sink) : sink_(sink) {}
  // For HttpExchange::on_data; holds a reference to this.
  std::function<bool(std::string_view)> OnData();
  int64_t received() const { return received_; }
  bool refused() const { return refused_; }
  // kIo "<what>: the sink refused the data after N bytes".
  Error Refused(const std::string& what) const;

 private:
  const std::function<bool(std::string_view)>& sink_;
  int64_t received_ = 0;
  bool refused_ = false;
};

// Text from a server, fit for a message: printable ASCII, at most `max` bytes.
std::string Printable(std::string_view text, size_t max = 300);

// A size a server sends (Content-Length, a listed size): decimal digits
// only, at most 18; kUnavailable (without a message) otherwise.
Result<int64_t> ParseSize(std::string_view text);

// The code an object store's HTTP status means: 5xx, 429 and the service's
// own busy codes (`busy`) kUnavailable, 401/403 kPermissionDenied, 404
// kNotFound, 408 kDeadlineExceeded, 409/412 kConflict, 3xx
// kFailedPrecondition (another region or endpoint: the configuration must
// change), other statuses kInvalidArgument.
ErrorCode ObjectStoreErrorCode(long status, bool busy);

// "<what>: HTTP <status>[ <code>][: <message>]", the server's text made printable.
std::string ObjectStoreErrorText(const std::string& what, long status, const std::string& code,
                                 const std::string& message);

}  // namespace ruleplane
