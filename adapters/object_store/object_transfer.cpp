#include "adapters/object_store/object_transfer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

#include "platform/file_input.h"
#include "platform/file_range.h"

namespace ruleplane {
namespace {

constexpr size_t kReadPieceBytes = 256 * 1024;  // what a hash reads of a part at a time

}  // namespace

Result<HttpResponse> ExchangeWithin(HttpClient& http, HttpExchange exchange, const ObjectCall& call,
                                    const ObjectTransferSettings& settings, const std::string& what) {
  exchange.method = call.method;
  exchange.body = call.body;
  if (call.fd >= 0) {
    exchange.body_size = call.size;
    exchange.read_body = FileRangeReader(call.fd, call.offset);
  }
  exchange.on_data = call.on_data;
  exchange.limits = call.limits;
  exchange.timeout = call.transfer ? settings.transfer_timeout : settings.request_timeout;
  if (call.transfer && settings.low_speed_bytes_per_second > 0) {
    exchange.limits.low_speed_bytes_per_second = settings.low_speed_bytes_per_second;
    exchange.limits.low_speed_window = std::chrono::seconds(60);
  }
  auto response = http.Exchange(exchange);
  if (!response.ok()) return Error{response.error().code, what + ": " + response.error().message, {}};
  return response;
}

Status RetryTransfer(int attempts, const std::function<Status()>& once) {
  Error last;
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    if (attempt > 1) std::this_thread::sleep_for(std::chrono::seconds(attempt - 1));
    Status done = once();
    if (done.ok()) return {};
    last = done.error();
    if (last.code != ErrorCode::kUnavailable && last.code != ErrorCode::kDeadlineExceeded) break;
    if (attempts > 1)
      last.message += " (attempt " + std::to_string(attempt) + " of " + std::to_string(attempts) + ")";
  }
  return last;
}

Result<UploadFile> UploadFile::Open(const std::string& path, const std::string& what) {
  auto fd = OpenRegularFile(path);
  if (!fd.ok()) return Error{fd.error().code, what + ": the file to upload: " + fd.error().message, {}};
  UploadFile file(*fd, 0);
  struct stat status {};
  if (fstat(*fd, &status) != 0)
    return Error{ErrorCode::kIo, what + ": " + path + ": " + std::strerror(errno), {}};
  file.size_ = status.st_size;
  return file;
}

UploadFile::~UploadFile() {
  if (fd_ >= 0) close(fd_);
}

Status ReadFileRange(int fd, int64_t offset, int64_t size, const std::string& what,
                     const std::function<void(std::string_view)>& piece) {
  std::string buffer(kReadPieceBytes, '\0');
  for (int64_t done = 0; done < size;) {
    const size_t want = static_cast<size_t>(std::min<int64_t>(size - done, kReadPieceBytes));
    const ssize_t got = pread(fd, buffer.data(), want, offset + done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      return Error{ErrorCode::kIo,
                   what + ": the file could not be read at byte " + std::to_string(offset + done) + ": " +
                       (got < 0 ? std::strerror(errno) : "it is shorter than when the upload began"),
                   {}};
    }
    piece(std::string_view(buffer.data(), static_cast<size_t>(got)));
    done += got;
  }
  return {};
}

std::function<bool(std::string_view)> CountingSink::OnData() {
  return [this](std::string_view data) {
    received_ += static_cast<int64_t>(data.size());
    if (sink_(data)) return true;
    refused_ = true;
    return false;
  };
}

Error CountingSink::Refused(const std::string& what) const {
  return Error{
      ErrorCode::kIo, what + ": the sink refused the data after " + std::to_string(received_) + " bytes", {}};
}

std::string Printable(std::string_view text, size_t max) {
  std::string out;
  for (char c : text.substr(0, max)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out;
}

Result<int64_t> ParseSize(std::string_view text) {
  if (text.empty() || text.size() > 18) return Error{ErrorCode::kUnavailable, "", {}};
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return Error{ErrorCode::kUnavailable, "", {}};
    value = value * 10 + (c - '0');
  }
  return value;
}

ErrorCode ObjectStoreErrorCode(long status, bool busy) {
  if (status >= 500 || status == 429 || busy) return ErrorCode::kUnavailable;
  if (status == 401 || status == 403) return ErrorCode::kPermissionDenied;
  if (status == 404) return ErrorCode::kNotFound;
  if (status == 408) return ErrorCode::kDeadlineExceeded;
  if (status == 409 || status == 412) return ErrorCode::kConflict;
  if (status >= 300 && status < 400) return ErrorCode::kFailedPrecondition;
  return ErrorCode::kInvalidArgument;
}

std::string ObjectStoreErrorText(const std::string& what, long status, const std::string& code,
                                 const std::string& message) {
  std::string text = what + ": HTTP " + std::to_string(status);
  if (!code.empty()) text += " " + Printable(code, 64);
  if (!message.empty()) text += ": " + Printable(message);
  return text;
}

}  // namespace ruleplane
