#include "adapters/object_store/azure_blob_client.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <utility>

#include "adapters/object_store/s3_xml.h"
#include "platform/azure_shared_key.h"
#include "platform/base64.h"
#include "platform/file_input.h"

namespace ruleplane {
namespace {

// What a server may send in answers the client holds, each named in the
// error when it is larger.
constexpr size_t kMaxAzureListPageBytes =
    32 << 20;  // 5,000 blobs of up to 1 KiB of name each, and their properties
constexpr size_t kMaxAzureShortAnswerBytes = 1 << 20;
constexpr int64_t kMinBlockBytes = int64_t{64} << 10;
constexpr int64_t kMaxBlockBytes = int64_t{4000} << 20;  // the service's largest block
constexpr int64_t kMaxBlocks = 50'000;                   // the most blocks a committed blob has

Error Invalid(const std::string& message) { return Error{ErrorCode::kInvalidArgument, message, {}}; }

// Azure's messages go on with "\nRequestId:...\nTime:...": the first line says it.
std::string FirstLine(std::string_view text) { return std::string(text.substr(0, text.find('\n'))); }

// The service's error code: the x-ms-error-code header, or the error
// document's Code.
std::string AzureErrorCode(const HttpResponse& response) {
  std::string code = response.Header("x-ms-error-code");
  return code.empty() ? XmlText(response.body, "Code").value_or("") : code;
}

// The error an Azure answer means, with the service's code and message.
Error AzureStatusError(const HttpResponse& response, const std::string& what) {
  const std::string code = AzureErrorCode(response);
  const std::string message = FirstLine(XmlText(response.body, "Message").value_or(""));
  const std::string detail = XmlText(response.body, "AuthenticationErrorDetail").value_or("");
  const long status = response.status;
  const ErrorCode error = ObjectStoreErrorCode(
      status, code == "ServerBusy" || code == "OperationTimedOut" || code == "InternalError");
  std::string text = ObjectStoreErrorText(what, status, code, message);
  if (!detail.empty()) text += " (" + Printable(detail, 200) + ")";
  if (code.empty() && status == 404) text += " (no such blob or container)";
  return Error{error, text, {}};
}

// The base64 MD5 of [offset, offset + size) of `fd`, read in pieces; kIo
// naming `what`.
Result<std::string> RangeMd5(int fd, int64_t offset, int64_t size, const std::string& what) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!context || EVP_DigestInit_ex(context.get(), EVP_md5(), nullptr) != 1)
    return Error{ErrorCode::kInternal, what + ": OpenSSL could not start an MD5", {}};
  if (Status read =
          ReadFileRange(fd, offset, size, what,
                        [&](std::string_view p) { EVP_DigestUpdate(context.get(), p.data(), p.size()); });
      !read.ok())
    return read.error();
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(context.get(), digest, &length);
  return Base64Encode(std::string_view(reinterpret_cast<const char*>(digest), length));
}

// A block's ID: "<upload>-<number as ten digits>" in base64, where <upload> is 16 random hex digits of this
// upload. etcd-backup-restore's IDs are the number alone; two uploaders of one blob name (two agents that
// both think they lead) then stage blocks under the same IDs, and a commit could take the other's block 1
// with its own blocks 2 to n: a blob that is neither snapshot, published as whole. With an upload's own IDs,
// a block another commit discarded fails the commit instead. Every ID of a blob has the same length, as Azure
// requires.
std::optional<std::string> UploadNonce() {
  unsigned char bytes[8];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return std::nullopt;
  char hex[17];
  for (size_t i = 0; i < sizeof bytes; ++i) std::snprintf(hex + 2 * i, 3, "%02x", bytes[i]);
  return hex;
}

std::string BlockId(const std::string& upload, int number) {
  char digits[16];
  std::snprintf(digits, sizeof digits, "%010d", number);
  return Base64Encode(upload + "-" + digits);
}

}  // namespace

// One request: what is signed and what is sent.
struct AzureBlobClient::Call : ObjectCall {
  std::string blob;  // "" = the container
};

AzureBlobClient::AzureBlobClient(AzureBlobConfig config) : config_(std::move(config)), http_(config_.tls) {}

Result<std::unique_ptr<AzureBlobClient>> AzureBlobClient::Create(AzureBlobConfig config) {
  if (config.account.empty()) return Invalid("Azure Blob: no storage account given");
  if (config.container.empty())
    return Invalid("Azure Blob account '" + config.account + "': no container given");
  if (config.key.empty())
    return Invalid("Azure Blob account '" + config.account + "': no storage account key given");
  auto key = Base64Decode(config.key);
  if (!key || key->empty())
    return Invalid("Azure Blob account '" + config.account + "': the storage account key is not base64");
  if (config.block_size_bytes < kMinBlockBytes || config.block_size_bytes > kMaxBlockBytes)
    return Invalid("Azure Blob account '" + config.account + "': a block size of " +
                   FormatBytes(config.block_size_bytes) + " is outside 64 KiB to 4000 MiB");
  if (config.block_attempts < 1) config.block_attempts = 1;
  if (config.list_page_results < 1 || config.list_page_results > 5000) config.list_page_results = 5000;
  std::string endpoint =
      config.endpoint.empty() ? "https://" + config.account + ".blob.core.windows.net" : config.endpoint;
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  if (Status usable = CheckHttpUrl(endpoint); !usable.ok()) return usable.error();
  const size_t authority_begin = endpoint.find("://") + 3;
  const size_t path_begin = std::min(endpoint.find('/', authority_begin), endpoint.size());
  const std::string authority = endpoint.substr(authority_begin, path_begin - authority_begin);
  const std::string path = endpoint.substr(path_begin);
  // The path is signed as it is sent: only characters that need no encoding.
  if (authority.empty() || authority.find_first_of("?#@ ") != std::string::npos ||
      AzureUriEncode(path, true) != path)
    return Invalid("Azure Blob endpoint '" + Printable(endpoint) +
                   "': only scheme://host[:port][/path] is understood");
  std::unique_ptr<AzureBlobClient> client(new AzureBlobClient(std::move(config)));
  client->decoded_key_ = std::move(*key);
  client->endpoint_ = endpoint;
  client->endpoint_path_ = path;
  return client;
}

std::string AzureBlobClient::What(std::string_view operation, const std::string& blob) const {
  return std::string(operation) + " " + ContainerUrl() + "/" + blob;
}

Result<HttpResponse> AzureBlobClient::Send(const Call& call) {
  const std::string path = endpoint_path_ + "/" + config_.container +
                           (call.blob.empty() ? "" : "/" + AzureUriEncode(call.blob, true));
  SharedKeyRequest request;
  request.method = call.method;
  request.account = config_.account;
  request.path = path;
  request.query = call.query;
  request.headers = {{"x-ms-date", HttpDate(std::chrono::system_clock::now())},
                     {"x-ms-version", std::string(kApiVersion)}};
  request.headers.insert(request.headers.end(), call.headers.begin(), call.headers.end());
  request.content_length = call.body_size();
  const SharedKeySignature signature = SignSharedKey(request, decoded_key_);

  HttpExchange exchange;
  const size_t authority_end = endpoint_.size() - endpoint_path_.size();
  exchange.url = endpoint_.substr(0, authority_end) + path +
                 (call.query.empty() ? "" : "?" + AzureQueryString(call.query));
  for (const auto& [name, value] : request.headers) exchange.headers.push_back(name + ": " + value);
  exchange.headers.push_back("Authorization: " + signature.authorization);
  return ExchangeWithin(http_, std::move(exchange), call, config_, What(call.method, call.blob));
}

Status AzureBlobClient::PutBlobFromFile(const std::string& blob, const std::string& path) {
  auto file = UploadFile::Open(path, What("PutBlob", blob));
  if (!file.ok()) return file.error();
  if (file->size() < config_.block_size_bytes) return PutSingle(blob, file->fd(), file->size());
  return PutBlocks(blob, file->fd(), file->size());
}

Status AzureBlobClient::PutSingle(const std::string& blob, int fd, int64_t size) {
  auto md5 = RangeMd5(fd, 0, size, What("PutBlob", blob));
  if (!md5.ok()) return md5.error();
  Call call;
  call.method = "PUT";
  call.blob = blob;
  call.headers = {{"x-ms-blob-type", "BlockBlob"}, {"Content-MD5", *md5}};
  call.fd = fd;
  call.size = size;
  call.transfer = true;
  call.limits = {.max_body_bytes = kMaxAzureShortAnswerBytes, .name = "an Azure upload answer"};
  auto response = Send(call);
  if (!response.ok()) return response.error();
  if (response->status != 201) return AzureStatusError(*response, What("PutBlob", blob));
  return {};
}

Status AzureBlobClient::PutBlocks(const std::string& blob, int fd, int64_t size) {
  const int64_t block_size = std::max(config_.block_size_bytes, (size + kMaxBlocks - 1) / kMaxBlocks);
  // Nothing to undo when a step fails: what was staged stays uncommitted.
  auto abandon = [](const Error& error) -> Status {
    return Error{error.code,
                 error.message +
                     "; the upload was abandoned (its staged blocks are never committed, no blob "
                     "appears)",
                 {}};
  };
  std::string document = "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>";
  const std::optional<std::string> upload = UploadNonce();
  if (!upload)
    return Error{ErrorCode::kInternal, What("PutBlock", blob) + ": no random bytes for its block IDs", {}};
  int number = 1;
  for (int64_t offset = 0; offset < size; offset += block_size, ++number) {
    const std::string id = BlockId(*upload, number);
    Status staged = PutBlock(blob, id, number, fd, offset, std::min(block_size, size - offset));
    if (!staged.ok()) return abandon(staged.error());
    document += "<Latest>" + id + "</Latest>";
  }
  document += "</BlockList>";

  Call commit;
  commit.method = "PUT";
  commit.blob = blob;
  commit.query = {{"comp", "blocklist"}};
  // Sent by libcurl from memory, which would otherwise add a form's Content-Type.
  commit.headers = {{"Content-Type", "application/xml"}};
  commit.body = document;
  commit.limits = {.max_body_bytes = kMaxAzureShortAnswerBytes, .name = "an Azure upload answer"};
  auto committed = Send(commit);
  if (!committed.ok()) return abandon(committed.error());
  if (committed->status != 201) return abandon(AzureStatusError(*committed, What("PutBlockList", blob)));
  return {};
}

Status AzureBlobClient::PutBlock(const std::string& blob, const std::string& block_id, int number, int fd,
                                 int64_t offset, int64_t size) {
  const std::string what = What("PutBlock", blob) + " block " + std::to_string(number);
  auto md5 = RangeMd5(fd, offset, size, what);
  if (!md5.ok()) return md5.error();
  Call call;
  call.method = "PUT";
  call.blob = blob;
  call.query = {{"comp", "block"}, {"blockid", block_id}};
  call.headers = {{"Content-MD5", *md5}};
  call.fd = fd;
  call.offset = offset;
  call.size = size;
  call.transfer = true;
  call.limits = {.max_body_bytes = kMaxAzureShortAnswerBytes, .name = "an Azure upload answer"};
  return RetryTransfer(config_.block_attempts, [&]() -> Status {
    auto response = Send(call);
    if (!response.ok()) return response.error();
    if (response->status != 201) return AzureStatusError(*response, what);
    return {};
  });
}

Result<int64_t> AzureBlobClient::GetBlobToSink(const std::string& blob,
                                               const std::function<bool(std::string_view)>& sink) {
  CountingSink counted(sink);
  Call call;
  call.method = "GET";
  call.blob = blob;
  call.on_data = counted.OnData();
  call.transfer = true;
  call.limits = {.max_body_bytes = 0, .name = "an Azure blob"};
  auto response = Send(call);
  if (!response.ok()) return response.error();
  if (response->status != 200) return AzureStatusError(*response, What("GetBlob", blob));
  if (counted.refused()) return counted.Refused(What("GetBlob", blob));
  const int64_t received = counted.received();
  const std::string length = response->Header("content-length");
  auto expected = ParseSize(length);
  if (!expected.ok() || *expected != received)
    return Error{ErrorCode::kUnavailable,
                 What("GetBlob", blob) + ": the body ended after " + std::to_string(received) +
                     " bytes, its Content-Length says '" + Printable(length, 20) + "'",
                 {}};
  return received;
}

Status AzureBlobClient::DeleteBlob(const std::string& blob) {
  Call call;
  call.method = "DELETE";
  call.blob = blob;
  call.limits = {.max_body_bytes = kMaxAzureShortAnswerBytes, .name = "an Azure answer"};
  auto response = Send(call);
  if (!response.ok()) return response.error();
  if (response->status == 202 || response->status == 200) return {};
  if (response->status == 404 && AzureErrorCode(*response) == "BlobNotFound") return {};
  return AzureStatusError(*response, What("DeleteBlob", blob));
}

Result<std::vector<AzureBlob>> AzureBlobClient::ListBlobs(const std::string& prefix) {
  std::vector<AzureBlob> blobs;
  std::string marker;
  const std::string what = What("ListBlobs", prefix) + "*";
  for (;;) {
    Call call;
    call.method = "GET";
    call.query = {{"restype", "container"},
                  {"comp", "list"},
                  {"prefix", prefix},
                  {"maxresults", std::to_string(config_.list_page_results)}};
    if (!marker.empty()) call.query.emplace_back("marker", marker);
    call.limits = {.max_body_bytes = kMaxAzureListPageBytes, .name = "an Azure listing page"};
    auto response = Send(call);
    if (!response.ok()) return Error{response.error().code, what + ": " + response.error().message, {}};
    if (response->status != 200) return AzureStatusError(*response, what);
    const std::string& page = response->body;
    auto malformed = [&](const std::string& why) {
      return Error{ErrorCode::kUnavailable, what + ": a listing page " + why, {}};
    };
    for (std::string_view entry : XmlElements(page, "Blob")) {
      AzureBlob blob;
      std::optional<std::string> name = XmlText(entry, "Name");
      if (!name || name->empty()) return malformed("holds an entry without a valid Name");
      auto size = ParseSize(XmlText(entry, "Content-Length").value_or(""));
      if (!size.ok()) return malformed("holds an entry without a valid Content-Length: " + Printable(*name));
      blob.name = std::move(*name);
      blob.size = *size;
      blob.last_modified = XmlText(entry, "Last-Modified").value_or("");
      blob.etag = XmlText(entry, "Etag").value_or("");
      blobs.push_back(std::move(blob));
      if (static_cast<int64_t>(blobs.size()) > config_.max_listed_blobs)
        return Error{ErrorCode::kFailedPrecondition,
                     what + ": more than " + std::to_string(config_.max_listed_blobs) +
                         " blobs (the bound on one listing)",
                     {}};
    }
    std::string next = XmlText(page, "NextMarker").value_or("");
    if (next.empty()) break;
    if (next == marker) return malformed("hands back the marker it was asked with");
    marker = std::move(next);
  }
  return blobs;
}

}  // namespace ruleplane
