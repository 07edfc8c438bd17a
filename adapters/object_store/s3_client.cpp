#include "adapters/object_store/s3_client.h"

#include <openssl/evp.h>

#include <algorithm>
#include <utility>

#include "adapters/object_store/s3_xml.h"
#include "platform/base64.h"
#include "platform/file_input.h"
#include "platform/sha256_stream.h"

namespace ruleplane {
namespace {

// What a server may send in answers the client holds, each named in the
// error when it is larger.
constexpr size_t kMaxS3ListPageBytes = 16 << 20;  // 1,000 keys of up to 1 KiB each, escaped, and their fields
constexpr size_t kMaxS3ShortAnswerBytes = 1 << 20;
constexpr int64_t kMinPartBytes = int64_t{5} << 20;  // S3's smallest part but the last
constexpr int64_t kMaxParts = 10'000;

std::string Unquoted(std::string etag) {
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') return etag.substr(1, etag.size() - 2);
  return etag;
}

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char byte : bytes) {
    hex += kDigits[byte >> 4];
    hex += kDigits[byte & 0xf];
  }
  return hex;
}

std::string Md5Base64(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(data.data(), data.size(), digest, &size, EVP_md5(), nullptr);
  return Base64Encode(std::string_view(reinterpret_cast<const char*>(digest), size));
}

// The error an S3 answer means, with S3's Code and Message from its error
// document (a HEAD answer has none: its status says it).
Error S3StatusError(const HttpResponse& response, const std::string& what) {
  const std::string code = XmlText(response.body, "Code").value_or("");
  const std::string message = XmlText(response.body, "Message").value_or("");
  const long status = response.status;
  const ErrorCode error =
      ObjectStoreErrorCode(status, code == "SlowDown" || code == "RequestTimeout" ||
                                       code == "InternalError" || code == "ServiceUnavailable");
  std::string text = ObjectStoreErrorText(what, status, code, message);
  if (const auto endpoint = XmlText(response.body, "Endpoint"); endpoint && !endpoint->empty())
    text += " (the bucket answers at " + Printable(*endpoint, 200) + ")";
  if (code.empty() && status == 404) text += " (no such object or bucket)";
  return Error{error, text, {}};
}

}  // namespace

// One request: what is signed and what is sent.
struct S3Client::Call : ObjectCall {
  std::string key;                            // "" = the bucket
  std::vector<std::string> unsigned_headers;  // "Content-Type: ..."
  // The body's SHA-256 (hex); for a range of a file, computed beforehand.
  std::string payload_hash = std::string(kEmptyPayloadSha256);
};

S3Client::S3Client(S3Config config) : config_(std::move(config)), http_(config_.tls) {}

Result<std::unique_ptr<S3Client>> S3Client::Create(S3Config config) {
  auto invalid = [](const std::string& message) { return Error{ErrorCode::kInvalidArgument, message, {}}; };
  if (config.bucket.empty()) return invalid("S3: no bucket given");
  if (config.credentials.access_key_id.empty() || config.credentials.secret_access_key.empty())
    return invalid("S3 bucket '" + config.bucket + "': no access key id or secret access key given");
  if (config.region.empty()) return invalid("S3 bucket '" + config.bucket + "': no region given");
  if (config.part_size_bytes < kMinPartBytes)
    return invalid("S3 bucket '" + config.bucket + "': a part size of " +
                   FormatBytes(config.part_size_bytes) + " is below S3's 5 MiB minimum");
  if (config.part_attempts < 1) config.part_attempts = 1;
  if (config.list_page_keys < 1 || config.list_page_keys > 1000) config.list_page_keys = 1000;
  if (config.encryption.kind == S3Encryption::Kind::kCustomerKey &&
      config.encryption.customer_key.size() != 32)
    return invalid("S3 bucket '" + config.bucket + "': an SSE-C key must be 32 bytes (AES-256), not " +
                   std::to_string(config.encryption.customer_key.size()));
  const bool endpoint_given = !config.endpoint.empty();
  std::string endpoint = endpoint_given ? config.endpoint : "https://s3." + config.region + ".amazonaws.com";
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  if (Status usable = CheckHttpUrl(endpoint); !usable.ok()) return usable.error();
  std::unique_ptr<S3Client> client(new S3Client(std::move(config)));
  const size_t scheme_end = endpoint.find("://");
  client->scheme_ = endpoint.substr(0, scheme_end);
  for (char& c : client->scheme_) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  client->authority_ = endpoint.substr(scheme_end + 3);
  if (client->authority_.empty() || client->authority_.find_first_of("/?#@ ") != std::string::npos)
    return invalid("S3 endpoint '" + Printable(endpoint) + "': only scheme://host[:port] is understood");
  const S3Config& c = client->config_;
  // A bucket with dots does not fit a TLS wildcard certificate as a host name.
  client->path_style_ =
      c.addressing == S3Addressing::kPathStyle ||
      (c.addressing == S3Addressing::kAuto && (endpoint_given || c.bucket.find('.') != std::string::npos));
  return client;
}

std::string S3Client::What(std::string_view operation, const std::string& key) const {
  return std::string(operation) + " s3://" + config_.bucket + "/" + key;
}

Result<HttpResponse> S3Client::Send(const Call& call) {
  SigV4Request request;
  request.method = call.method;
  request.host = path_style_ ? authority_ : config_.bucket + "." + authority_;
  request.path =
      path_style_ ? "/" + config_.bucket + (call.key.empty() ? "" : "/" + call.key) : "/" + call.key;
  request.query = call.query;
  request.headers = call.headers;
  request.payload_hash = call.payload_hash;
  const SigV4Signature signature =
      SignSigV4(request, config_.credentials, config_.region, std::chrono::system_clock::now());

  HttpExchange exchange;
  exchange.url = scheme_ + "://" + request.host + signature.encoded_path +
                 (signature.encoded_query.empty() ? "" : "?" + signature.encoded_query);
  exchange.headers = signature.headers;
  exchange.headers.insert(exchange.headers.end(), call.unsigned_headers.begin(), call.unsigned_headers.end());
  return ExchangeWithin(http_, std::move(exchange), call, config_, What(call.method, call.key));
}

namespace {

// The headers that ask for server-side encryption when an object is written.
std::vector<std::pair<std::string, std::string>> WriteEncryptionHeaders(const S3Encryption& encryption) {
  switch (encryption.kind) {
    case S3Encryption::Kind::kS3:
      return {{"x-amz-server-side-encryption", "AES256"}};
    case S3Encryption::Kind::kKms:
      if (encryption.kms_key_id.empty()) return {{"x-amz-server-side-encryption", "aws:kms"}};
      return {{"x-amz-server-side-encryption", "aws:kms"},
              {"x-amz-server-side-encryption-aws-kms-key-id", encryption.kms_key_id}};
    default:
      return {};
  }
}

// SSE-C: the key goes with every write of data and every read.
std::vector<std::pair<std::string, std::string>> CustomerKeyHeaders(const S3Encryption& encryption) {
  if (encryption.kind != S3Encryption::Kind::kCustomerKey) return {};
  return {{"x-amz-server-side-encryption-customer-algorithm", encryption.customer_algorithm},
          {"x-amz-server-side-encryption-customer-key", Base64Encode(encryption.customer_key)},
          {"x-amz-server-side-encryption-customer-key-MD5", Md5Base64(encryption.customer_key)}};
}

template <typename T>
void Append(std::vector<T>& to, const std::vector<T>& more) {
  to.insert(to.end(), more.begin(), more.end());
}

}  // namespace

Status S3Client::PutObjectFromFile(const std::string& key, const std::string& path) {
  auto file = UploadFile::Open(path, What("PutObject", key));
  if (!file.ok()) return file.error();
  if (file->size() < config_.part_size_bytes) return PutSingle(key, file->fd(), file->size());
  return PutMultipart(key, file->fd(), file->size());
}

// Payload hash: the SHA-256 of every body is computed and signed, over
// https as over http, at the price of reading each part twice from the
// local file (the second read comes from the page cache). UNSIGNED-PAYLOAD
// would save that read over TLS, but in-cluster stores (MinIO, OCS) are
// often reached over plain http, where only a signed hash lets the store
// refuse bytes changed on the way, and some S3-compatible stores refuse
// unsigned payloads; one rule for both keeps the two paths the same.
Status S3Client::PutSingle(const std::string& key, int fd, int64_t size) {
  Sha256Stream hash;
  if (Status read =
          ReadFileRange(fd, 0, size, What("PutObject", key), [&](std::string_view p) { hash.Update(p); });
      !read.ok())
    return read;
  const std::string digest = hash.Finish();
  Call call;
  call.method = "PUT";
  call.key = key;
  call.headers = WriteEncryptionHeaders(config_.encryption);
  Append(call.headers, CustomerKeyHeaders(config_.encryption));
  call.unsigned_headers = {"Content-Type: application/octet-stream"};
  call.fd = fd;
  call.size = size;
  call.payload_hash = Hex(digest);
  call.transfer = true;
  call.limits = {.max_body_bytes = kMaxS3ShortAnswerBytes, .name = "an S3 upload answer"};
  auto response = Send(call);
  if (!response.ok()) return response.error();
  if (response->status != 200) return S3StatusError(*response, What("PutObject", key));
  return {};
}

Status S3Client::PutMultipart(const std::string& key, int fd, int64_t size) {
  const int64_t part_size = std::max(config_.part_size_bytes, (size + kMaxParts - 1) / kMaxParts);
  Call create;
  create.method = "POST";
  create.key = key;
  create.query = {{"uploads", ""}};
  create.headers = WriteEncryptionHeaders(config_.encryption);
  Append(create.headers, CustomerKeyHeaders(config_.encryption));
  create.unsigned_headers = {"Content-Type: application/octet-stream"};
  create.limits = {.max_body_bytes = kMaxS3ShortAnswerBytes, .name = "an S3 upload answer"};
  auto created = Send(create);
  if (!created.ok()) return created.error();
  if (created->status != 200) return S3StatusError(*created, What("CreateMultipartUpload", key));
  const std::string upload_id = XmlText(created->body, "UploadId").value_or("");
  if (upload_id.empty())
    return Error{
        ErrorCode::kUnavailable,
        What("CreateMultipartUpload", key) + ": the answer holds no UploadId: " + Printable(created->body),
        {}};

  // Every failure from here on aborts the upload.
  auto abandon = [&](const Error& error) -> Status {
    Status aborted = AbortUpload(key, upload_id);
    if (aborted.ok()) return Error{error.code, error.message + "; the upload was aborted", {}};
    return Error{
        error.code, error.message + "; aborting the upload failed too: " + aborted.error().message, {}};
  };
  std::string document = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">";
  int part_number = 1;
  for (int64_t offset = 0; offset < size; offset += part_size, ++part_number) {
    const int64_t length = std::min(part_size, size - offset);
    auto etag = UploadPart(key, upload_id, part_number, fd, offset, length);
    if (!etag.ok()) return abandon(etag.error());
    document += "<Part><PartNumber>" + std::to_string(part_number) + "</PartNumber><ETag>" +
                XmlEscape(*etag) + "</ETag></Part>";
  }
  document += "</CompleteMultipartUpload>";

  Call complete;
  complete.method = "POST";
  complete.key = key;
  complete.query = {{"uploadId", upload_id}};
  complete.body = document;
  complete.payload_hash = Sha256Hex(document);
  complete.unsigned_headers = {"Content-Type: application/xml"};
  complete.limits = {.max_body_bytes = kMaxS3ShortAnswerBytes, .name = "an S3 upload answer"};
  auto completed = Send(complete);
  if (!completed.ok()) return abandon(completed.error());
  // S3 may answer 200 and then report the failure in the body.
  if (completed->status != 200 || completed->body.find("<Error>") != std::string::npos) {
    HttpResponse failed = *completed;
    if (failed.status == 200) failed.status = 500;
    return abandon(S3StatusError(failed, What("CompleteMultipartUpload", key)));
  }
  return {};
}

Result<std::string> S3Client::UploadPart(const std::string& key, const std::string& upload_id,
                                         int part_number, int fd, int64_t offset, int64_t size) {
  const std::string what = What("UploadPart", key) + " part " + std::to_string(part_number);
  Sha256Stream hash;
  if (Status read = ReadFileRange(fd, offset, size, what, [&](std::string_view p) { hash.Update(p); });
      !read.ok())
    return read.error();
  const std::string digest = hash.Finish();
  Call call;
  call.method = "PUT";
  call.key = key;
  call.query = {{"partNumber", std::to_string(part_number)}, {"uploadId", upload_id}};
  call.headers = CustomerKeyHeaders(config_.encryption);
  call.fd = fd;
  call.offset = offset;
  call.size = size;
  call.payload_hash = Hex(digest);
  call.transfer = true;
  call.limits = {.max_body_bytes = kMaxS3ShortAnswerBytes, .name = "an S3 upload answer"};
  std::string etag;
  Status sent = RetryTransfer(config_.part_attempts, [&]() -> Status {
    auto response = Send(call);
    if (!response.ok()) return response.error();
    if (response->status != 200) return S3StatusError(*response, what);
    etag = response->Header("etag");
    if (etag.empty()) return Error{ErrorCode::kUnavailable, what + ": the answer has no ETag", {}};
    return {};
  });
  if (!sent.ok()) return sent.error();
  return etag;
}

Status S3Client::AbortUpload(const std::string& key, const std::string& upload_id) {
  Call call;
  call.method = "DELETE";
  call.key = key;
  call.query = {{"uploadId", upload_id}};
  call.limits = {.max_body_bytes = kMaxS3ShortAnswerBytes, .name = "an S3 answer"};
  auto response = Send(call);
  if (!response.ok()) return response.error();
  if (response->status != 204 && response->status != 200 && response->status != 404)
    return S3StatusError(*response, What("AbortMultipartUpload", key));
  return {};
}

Result<S3ObjectInfo> S3Client::GetObjectToSink(const std::string& key,
                                               const std::function<bool(std::string_view)>& sink) {
  CountingSink counted(sink);
  Call call;
  call.method = "GET";
  call.key = key;
  call.headers = CustomerKeyHeaders(config_.encryption);
  call.on_data = counted.OnData();
  call.transfer = true;
  call.limits = {.max_body_bytes = 0, .name = "an S3 object"};
  auto response = Send(call);
  if (!response.ok()) return response.error();
  if (response->status != 200) return S3StatusError(*response, What("GetObject", key));
  if (counted.refused()) return counted.Refused(What("GetObject", key));
  const int64_t received = counted.received();
  S3ObjectInfo info;
  info.etag = Unquoted(response->Header("etag"));
  info.last_modified = response->Header("last-modified");
  info.size = received;
  const std::string length = response->Header("content-length");
  if (!length.empty()) {
    auto expected = ParseSize(length);
    if (!expected.ok() || *expected != received)
      return Error{ErrorCode::kUnavailable,
                   What("GetObject", key) + ": the body ended after " + std::to_string(received) +
                       " bytes, its Content-Length says " + Printable(length, 20),
                   {}};
  }
  return info;
}

Result<S3ObjectInfo> S3Client::HeadObject(const std::string& key) {
  Call call;
  call.method = "HEAD";
  call.key = key;
  call.headers = CustomerKeyHeaders(config_.encryption);
  call.limits = {.max_body_bytes = kMaxS3ShortAnswerBytes, .name = "an S3 answer"};
  auto response = Send(call);
  if (!response.ok()) return response.error();
  if (response->status != 200) return S3StatusError(*response, What("HeadObject", key));
  auto size = ParseSize(response->Header("content-length"));
  if (!size.ok())
    return Error{
        ErrorCode::kUnavailable, What("HeadObject", key) + ": the answer has no valid Content-Length", {}};
  return S3ObjectInfo{*size, response->Header("last-modified"), Unquoted(response->Header("etag"))};
}

Status S3Client::DeleteObject(const std::string& key) {
  Call call;
  call.method = "DELETE";
  call.key = key;
  call.limits = {.max_body_bytes = kMaxS3ShortAnswerBytes, .name = "an S3 answer"};
  auto response = Send(call);
  if (!response.ok()) return response.error();
  if (response->status != 204 && response->status != 200 && response->status != 404)
    return S3StatusError(*response, What("DeleteObject", key));
  return {};
}

Result<std::vector<S3Object>> S3Client::ListObjects(const std::string& prefix) {
  std::vector<S3Object> objects;
  std::string token;
  const std::string what = What("ListObjectsV2", prefix);
  for (;;) {
    Call call;
    call.method = "GET";
    call.query = {{"list-type", "2"},
                  {"prefix", prefix},
                  {"max-keys", std::to_string(config_.list_page_keys)},
                  {"encoding-type", "url"}};
    if (!token.empty()) call.query.emplace_back("continuation-token", token);
    call.limits = {.max_body_bytes = kMaxS3ListPageBytes, .name = "an S3 listing page"};
    auto response = Send(call);
    if (!response.ok()) return Error{response.error().code, what + "*: " + response.error().message, {}};
    if (response->status != 200) return S3StatusError(*response, what + "*");
    const std::string& page = response->body;
    const bool url_encoded = XmlText(page, "EncodingType").value_or("") == "url";
    auto malformed = [&](const std::string& why) {
      return Error{ErrorCode::kUnavailable, what + "*: a listing page " + why, {}};
    };
    for (std::string_view entry : XmlElements(page, "Contents")) {
      S3Object object;
      std::optional<std::string> key = XmlText(entry, "Key");
      if (key && url_encoded) key = S3UrlDecode(*key);
      if (!key || key->empty()) return malformed("holds an entry without a valid Key");
      auto size = ParseSize(XmlText(entry, "Size").value_or(""));
      if (!size.ok()) return malformed("holds an entry without a valid Size: " + Printable(*key));
      object.key = std::move(*key);
      object.size = *size;
      object.last_modified = XmlText(entry, "LastModified").value_or("");
      object.etag = Unquoted(XmlText(entry, "ETag").value_or(""));
      objects.push_back(std::move(object));
      if (static_cast<int64_t>(objects.size()) > config_.max_listed_keys)
        return Error{ErrorCode::kFailedPrecondition,
                     what + "*: more than " + std::to_string(config_.max_listed_keys) +
                         " keys (the bound on one listing)",
                     {}};
    }
    if (XmlText(page, "IsTruncated").value_or("false") != "true") break;
    std::string next = XmlText(page, "NextContinuationToken").value_or("");
    if (next.empty()) return malformed("says it is truncated and holds no NextContinuationToken");
    if (next == token) return malformed("hands back the continuation token it was asked with");
    token = std::move(next);
  }
  return objects;
}

}  // namespace ruleplane
