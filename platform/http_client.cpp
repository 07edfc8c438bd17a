#include "platform/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <mutex>

#include "platform/file_input.h"
#include "platform/tls_files.h"

namespace ruleplane {
namespace {

struct StreamState {
  const std::function<bool(std::string_view)>* on_data;
  HttpResponse* response;
  const HttpLimits* limits;
  bool stopped = false;
  uint64_t header_bytes = 0;
  uint64_t body_bytes = 0;
  // Exchange only: the request, the status of the answer being received
  // (from its status line), the request-body bytes read so far, and whether
  // the body's source ended early.
  const HttpExchange* exchange = nullptr;
  long status = 0;
  int64_t body_read = 0;
  bool body_short = false;
  enum class Over { kNothing, kHeaders, kBody } over = Over::kNothing;  // which bound ended the transfer
};

// Exchange keeps the headers of the last answer (a 100 Continue comes
// first) and its status, which decides where its body goes.
void KeepHeader(std::string_view line, StreamState& state, HttpResponse& response) {
  auto trim = [](std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
    return text;
  };
  if (line.rfind("HTTP/", 0) == 0) {
    response.headers.clear();
    const size_t space = line.find(' ');
    state.status =
        space == std::string_view::npos ? 0 : std::atol(std::string(line.substr(space + 1, 3)).c_str());
    return;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return;
  std::string name(trim(line.substr(0, colon)));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  response.headers.emplace_back(std::move(name), std::string(trim(line.substr(colon + 1))));
}

// Response headers: Retry-After (seconds) is kept, and every header for an
// Exchange; kMaxHeaderBytes in all (headers that never end end the transfer).
size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* state = static_cast<StreamState*>(user);
  state->header_bytes += size * count;
  if (state->header_bytes > kMaxHeaderBytes) {
    state->over = StreamState::Over::kHeaders;
    return 0;
  }
  auto* response = state->response;
  const std::string_view line(data, size * count);
  if (state->exchange != nullptr && response != nullptr) KeepHeader(line, *state, *response);
  constexpr std::string_view kRetryAfter = "retry-after:";
  if (response != nullptr && line.size() > kRetryAfter.size()) {
    std::string name(line.substr(0, kRetryAfter.size()));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (name == kRetryAfter) {
      int seconds = 0;
      bool digits = false;
      for (char c : line.substr(kRetryAfter.size())) {
        if (c >= '0' && c <= '9' && seconds < 100000) {
          seconds = seconds * 10 + (c - '0');
          digits = true;
        }
      }
      if (digits) response->retry_after_seconds = seconds;
    }
  }
  return size * count;
}

// The request body of an Exchange, from its source.
size_t OnRead(char* buffer, size_t size, size_t count, void* user) {
  auto* state = static_cast<StreamState*>(user);
  const int64_t left = state->exchange->body_size - state->body_read;
  if (left <= 0) return 0;
  const size_t want = static_cast<size_t>(std::min<int64_t>(left, static_cast<int64_t>(size * count)));
  const size_t got = state->exchange->read_body(buffer, want);
  if (got == 0 || got > want) {
    state->body_short = true;
    return CURL_READFUNC_ABORT;
  }
  state->body_read += static_cast<int64_t>(got);
  return got;
}

void SetBlob(CURL* curl, CURLoption option, const std::string& pem) {
  curl_blob blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
  curl_easy_setopt(curl, option, &blob);
}

// libcurl calls this about once a second, also while no data arrives.
int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const auto* cancel = static_cast<const std::atomic<bool>*>(user);
  return cancel != nullptr && cancel->load() ? 1 : 0;
}

size_t OnData(char* data, size_t size, size_t count, void* user) {
  auto* state = static_cast<StreamState*>(user);
  const size_t bytes = size * count;
  if (state->exchange != nullptr && (state->status < 200 || state->status > 299)) {
    // Why it failed: kept, cut at kMaxErrorBodyBytes.
    std::string& body = state->response->body;
    const size_t room = kMaxErrorBodyBytes - std::min(kMaxErrorBodyBytes, body.size());
    body.append(data, std::min(room, bytes));
    if (bytes <= room) return bytes;
    state->stopped = true;
    return 0;
  }
  state->body_bytes += bytes;
  if (state->limits->max_body_bytes > 0 && state->body_bytes > state->limits->max_body_bytes) {
    state->over = StreamState::Over::kBody;
    return 0;
  }
  if (state->on_data != nullptr) {
    if (!(*state->on_data)(std::string_view(data, bytes))) {
      state->stopped = true;
      return 0;  // ends the transfer
    }
  } else {
    state->response->body.append(data, bytes);
  }
  return bytes;
}

// A handshake that failed on this side: the server's certificate did not
// verify, or a file could not be used.
bool IsTlsFailure(CURLcode code) {
  return code == CURLE_SSL_CERTPROBLEM || code == CURLE_SSL_CACERT_BADFILE ||
         code == CURLE_PEER_FAILED_VERIFICATION;
}

// A failed TLS request, saying which file is at fault (libcurl names none).
// A handshake the server broke off, or a connection it reset before any
// answer, is what a server does that refuses a client certificate (etcd
// sends no alert) but also what a starting server does: retried
// (kUnavailable) unless a local file is at fault.
Error TlsError(CURLcode code, std::string message, const char* detail, const TlsConfig& tls) {
  if (detail[0] != '\0') message += std::string(" (") + detail + ")";
  if (Status files = CheckTlsFiles(tls, std::chrono::system_clock::now()); !files.ok())
    return Error{ErrorCode::kPermissionDenied, message + ": " + files.error().message, {}};
  // OpenSSL's words for a certificate of another host ("no alternative certificate subject name matches
  // target host name"): the CA is not at fault then.
  if (code == CURLE_PEER_FAILED_VERIFICATION &&
      std::string_view(detail).find("host name") != std::string_view::npos)
    return Error{ErrorCode::kPermissionDenied,
                 message + ": the server's certificate is not for the host in the URL",
                 {}};
  if (code == CURLE_PEER_FAILED_VERIFICATION) {
    return Error{ErrorCode::kPermissionDenied,
                 message + ": the server's certificate does not verify against " +
                     (!tls.ca_file.empty() ? "CA file " + tls.ca_file
                      : tls.ca_pem.empty() ? "the system's CAs"
                                           : "the given CA"),
                 {}};
  }
  if (IsTlsFailure(code)) return Error{ErrorCode::kPermissionDenied, message, {}};
  if (tls.cert_file.empty() && tls.cert_pem.empty()) {
    return Error{
        ErrorCode::kUnavailable,
        message + "; a server that requires client certificates ends the connection so, and none was given",
        {}};
  }
  return Error{ErrorCode::kUnavailable,
               message + "; a server that refuses client certificate " +
                   (tls.cert_file.empty() ? "(given as PEM)" : tls.cert_file) + " ends the connection so",
               {}};
}

}  // namespace

std::string HttpResponse::Header(std::string_view name) const {
  for (const auto& [key, value] : headers)
    if (key == name) return value;
  return "";
}

HttpClient::HttpClient(TlsConfig tls) : tls_(std::move(tls)) {
  static std::once_flag initialized;
  std::call_once(initialized, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  curl_ = curl_easy_init();
}

HttpClient::~HttpClient() { curl_easy_cleanup(static_cast<CURL*>(curl_)); }

Result<HttpResponse> HttpClient::Send(const std::string& method, const std::string& url,
                                      const std::string& body, std::chrono::milliseconds timeout,
                                      const std::vector<std::string>& headers, const HttpLimits& limits) {
  HttpResponse response;
  auto status = Stream(method, url, body, timeout, nullptr, &response, headers, limits);
  if (!status.ok()) return status.error();
  response.status = *status;
  return response;
}

Result<long> HttpClient::Stream(const std::string& method, const std::string& url, const std::string& body,
                                std::chrono::milliseconds timeout,
                                const std::function<bool(std::string_view)>& on_data,
                                const std::vector<std::string>& headers, const HttpLimits& limits) {
  return Stream(method, url, body, timeout, &on_data, nullptr, headers, limits);
}

Result<HttpResponse> HttpClient::Exchange(const HttpExchange& exchange) {
  HttpResponse response;
  auto status = Stream(exchange.method, exchange.url, exchange.body, exchange.timeout,
                       exchange.on_data ? &exchange.on_data : nullptr, &response, exchange.headers,
                       exchange.limits, &exchange);
  if (!status.ok()) return status.error();
  response.status = *status;
  return response;
}

Result<long> HttpClient::Stream(const std::string& method, const std::string& url, const std::string& body,
                                std::chrono::milliseconds timeout,
                                const std::function<bool(std::string_view)>* on_data, HttpResponse* collected,
                                const std::vector<std::string>& extra_headers, const HttpLimits& limits,
                                const HttpExchange* exchange) {
  auto* curl = static_cast<CURL*>(curl_);
  if (curl == nullptr) return Error{ErrorCode::kInternal, "libcurl could not start", {}};
  if (Status usable = CheckHttpUrl(url); !usable.ok()) return usable.error();
  for (const std::string& header : extra_headers) {
    if (header.find_first_of("\r\n") != std::string::npos)
      return Error{
          ErrorCode::kInvalidArgument, "a request header holds a line break (refused, not sent)", {}};
  }
  if (guard_) {
    if (Status allowed = guard_(); !allowed.ok()) return allowed.error();
  }
  curl_easy_reset(curl);
  StreamState state{on_data, collected, &limits};
  state.exchange = exchange;
  curl_slist* headers = nullptr;
  const bool own_content_type =
      std::any_of(extra_headers.begin(), extra_headers.end(),
                  [](const std::string& h) { return h.rfind("Content-Type:", 0) == 0; });
  if (!own_content_type && exchange == nullptr)
    headers = curl_slist_append(headers, "Content-Type: application/json");
  for (const std::string& header : extra_headers) headers = curl_slist_append(headers, header.c_str());
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_slist* connect_to = nullptr;
  for (const std::string& entry : connect_to_) connect_to = curl_slist_append(connect_to, entry.c_str());
  curl_easy_setopt(curl, CURLOPT_CONNECT_TO, connect_to);
  if (exchange != nullptr && exchange->read_body) {
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, OnRead);
    curl_easy_setopt(curl, CURLOPT_READDATA, &state);
    curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(exchange->body_size));
  } else if (!body.empty() || method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  }
  if (method == "HEAD") curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  // An object's key is a name, not a path: "a/../b" is sent as it is.
  if (exchange != nullptr) curl_easy_setopt(curl, CURLOPT_PATH_AS_IS, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::min<int64_t>(timeout.count(), 5000)));
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnData);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &state);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &state);
  if (limits.low_speed_window.count() > 0) {
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, limits.low_speed_bytes_per_second);
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, static_cast<long>(limits.low_speed_window.count()));
  }
  if (cancel_ != nullptr) {
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, OnProgress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, cancel_);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  }
  if (tls_.ca_file.empty() && !tls_.ca_pem.empty()) SetBlob(curl, CURLOPT_CAINFO_BLOB, tls_.ca_pem);
  if (tls_.cert_file.empty() && !tls_.cert_pem.empty()) SetBlob(curl, CURLOPT_SSLCERT_BLOB, tls_.cert_pem);
  if (tls_.key_file.empty() && !tls_.key_pem.empty()) SetBlob(curl, CURLOPT_SSLKEY_BLOB, tls_.key_pem);
  if (!tls_.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, tls_.ca_file.c_str());
  if (!tls_.cert_file.empty()) curl_easy_setopt(curl, CURLOPT_SSLCERT, tls_.cert_file.c_str());
  if (!tls_.key_file.empty()) curl_easy_setopt(curl, CURLOPT_SSLKEY, tls_.key_file.c_str());
  if (tls_.insecure_skip_verify) {
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  char detail[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, detail);
  const CURLcode code = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  curl_slist_free_all(connect_to);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  const std::string message = method + " " + url + ": " + curl_easy_strerror(code);
  if (state.body_short) {
    return Error{ErrorCode::kIo,
                 method + " " + url + ": the request body's source ended after " +
                     std::to_string(state.body_read) + " of " + std::to_string(exchange->body_size) +
                     " bytes; stopped there",
                 {}};
  }
  if (state.over == StreamState::Over::kHeaders) {
    return Error{ErrorCode::kUnavailable,
                 method + " " + url + ": the response headers are longer than " +
                     FormatBytes(static_cast<int64_t>(kMaxHeaderBytes)) +
                     " (the bound for every answer); stopped there",
                 {}};
  }
  if (state.over == StreamState::Over::kBody) {
    return Error{ErrorCode::kUnavailable,
                 method + " " + url + ": the answer is larger than " +
                     FormatBytes(static_cast<int64_t>(limits.max_body_bytes)) + " (the bound for " +
                     limits.name + "); stopped there",
                 {}};
  }
  // The low-speed bound ends a transfer as a timeout would, sooner.
  if (code == CURLE_OPERATION_TIMEDOUT && limits.low_speed_window.count() > 0) {
    double seconds = 0;
    curl_easy_getinfo(curl, CURLINFO_TOTAL_TIME, &seconds);
    if (seconds * 1000 < static_cast<double>(timeout.count()) - 500) {
      return Error{ErrorCode::kDeadlineExceeded,
                   method + " " + url + ": fewer than " + std::to_string(limits.low_speed_bytes_per_second) +
                       " bytes a second arrived for " + std::to_string(limits.low_speed_window.count()) +
                       " s (the low-speed bound for " + limits.name + "); stopped after " +
                       std::to_string(state.body_bytes) + " bytes",
                   {}};
    }
  }
  // A cancelled stream ends as asked; a cancelled request has no answer.
  if (code == CURLE_ABORTED_BY_CALLBACK && (on_data == nullptr || exchange != nullptr))
    return Error{ErrorCode::kUnavailable, message + " (cancelled)", {}};
  if (code == CURLE_OK || (code == CURLE_WRITE_ERROR && state.stopped) || code == CURLE_ABORTED_BY_CALLBACK)
    return status;
  if (code == CURLE_OPERATION_TIMEDOUT) {
    // A stream that ran until its time was up ended as asked.
    if (on_data != nullptr && status == 200 && exchange == nullptr) return status;
    return Error{ErrorCode::kDeadlineExceeded, message, {}};
  }
  const bool https = url.size() > 8 && (url[4] == 's' || url[4] == 'S') && url[5] == ':';
  const bool ended_early = status == 0 && (code == CURLE_SSL_CONNECT_ERROR || code == CURLE_SEND_ERROR ||
                                           code == CURLE_RECV_ERROR);
  if (https && (IsTlsFailure(code) || ended_early)) return TlsError(code, message, detail, tls_);
  return Error{ErrorCode::kUnavailable, message, {}};
}

Status CheckHttpUrl(std::string_view url) {
  std::string scheme(url.substr(0, url.find("://")));
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (url.find("://") != std::string_view::npos && (scheme == "http" || scheme == "https")) return {};
  std::string shown;
  for (char c : url.substr(0, 200)) shown += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  return Error{
      ErrorCode::kInvalidArgument, "'" + shown + "': only http:// and https:// URLs are allowed", {}};
}

Error HttpStatusError(long status, const std::string& what, const std::string& body) {
  ErrorCode code = ErrorCode::kInvalidArgument;
  if (status >= 500 || status == 429) code = ErrorCode::kUnavailable;
  if (status == 408 || status == 504) code = ErrorCode::kDeadlineExceeded;
  if (status == 409 || status == 412) code = ErrorCode::kConflict;
  if (status == 401 || status == 403) code = ErrorCode::kPermissionDenied;
  if (status == 404) code = ErrorCode::kNotFound;
  return Error{code, what + ": HTTP " + std::to_string(status) + ": " + body.substr(0, 500), {}};
}

}  // namespace ruleplane
