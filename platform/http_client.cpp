#include "platform/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <mutex>

#include "platform/file_input.h"

namespace ruleplane {
namespace {

struct StreamState {
  const std::function<bool(std::string_view)>* on_data;
  HttpResponse* response;
  const HttpLimits* limits;
  bool stopped = false;
  uint64_t header_bytes = 0;
  uint64_t body_bytes = 0;
  enum class Over { kNothing, kHeaders, kBody } over = Over::kNothing;  // which bound ended the transfer
};

// Response headers: only Retry-After (seconds) is kept; kMaxHeaderBytes in
// all (headers that never end end the transfer).
size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* state = static_cast<StreamState*>(user);
  state->header_bytes += size * count;
  if (state->header_bytes > kMaxHeaderBytes) {
    state->over = StreamState::Over::kHeaders;
    return 0;
  }
  auto* response = state->response;
  const std::string_view line(data, size * count);
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

}  // namespace

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

Result<long> HttpClient::Stream(const std::string& method, const std::string& url, const std::string& body,
                                std::chrono::milliseconds timeout,
                                const std::function<bool(std::string_view)>* on_data, HttpResponse* collected,
                                const std::vector<std::string>& extra_headers, const HttpLimits& limits) {
  auto* curl = static_cast<CURL*>(curl_);
  if (curl == nullptr) return Error{ErrorCode::kInternal, "libcurl could not start", {}};
  if (Status usable = CheckHttpUrl(url); !usable.ok()) return usable.error();
  for (const std::string& header : extra_headers) {
    if (header.find_first_of("\r\n") != std::string::npos)
      return Error{
          ErrorCode::kInvalidArgument, "a request header holds a line break (refused, not sent)", {}};
  }
  curl_easy_reset(curl);
  StreamState state{on_data, collected, &limits};
  curl_slist* headers = nullptr;
  const bool own_content_type =
      std::any_of(extra_headers.begin(), extra_headers.end(),
                  [](const std::string& h) { return h.rfind("Content-Type:", 0) == 0; });
  if (!own_content_type) headers = curl_slist_append(headers, "Content-Type: application/json");
  for (const std::string& header : extra_headers) headers = curl_slist_append(headers, header.c_str());
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  if (!body.empty() || method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  }
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
  const CURLcode code = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  const std::string message = method + " " + url + ": " + curl_easy_strerror(code);
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
  if (code == CURLE_ABORTED_BY_CALLBACK && on_data == nullptr)
    return Error{ErrorCode::kUnavailable, message + " (cancelled)", {}};
  if (code == CURLE_OK || (code == CURLE_WRITE_ERROR && state.stopped) || code == CURLE_ABORTED_BY_CALLBACK)
    return status;
  if (code == CURLE_OPERATION_TIMEDOUT) {
    // A stream that ran until its time was up ended as asked.
    if (on_data != nullptr && status == 200) return status;
    return Error{ErrorCode::kDeadlineExceeded, message, {}};
  }
  if (code == CURLE_SSL_CERTPROBLEM || code == CURLE_SSL_CACERT_BADFILE ||
      code == CURLE_PEER_FAILED_VERIFICATION) {
    return Error{ErrorCode::kPermissionDenied, message, {}};
  }
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
