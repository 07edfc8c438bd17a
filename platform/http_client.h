// HttpClient: one HTTP(S) request over libcurl with a timeout, TLS with a CA,
// a client certificate and key. Only http:// and https:// are spoken (any
// other scheme is kInvalidArgument before anything is sent; libcurl is
// restricted to both, redirects included); a header with a line break is
// refused. Transport failures are kUnavailable
// (connection refused, reset, DNS) or kDeadlineExceeded (timeout); an HTTP
// status is returned as it is and classified by the caller
// (HttpStatusError).
//
// Bounds on what a server sends, checked while it arrives (README, "Network
// bounds"): the response headers at most kMaxHeaderBytes (64 KiB) in all; a
// body kept by Send at most HttpLimits::max_body_bytes (each caller names
// the bound for its kind of request); a streamed body at most
// max_body_bytes in all when that is not 0; no transfer slower than
// HttpLimits' low-speed bound when one is set. Each is kUnavailable naming
// the bound, and the transfer stops there. Bodies are never decompressed
// (no Accept-Encoding is sent).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/common/error.h"

namespace ruleplane {

struct TlsConfig {
  std::string ca_file;    // verify the server against this CA ("" = system CAs)
  std::string cert_file;  // client certificate ("" = none)
  std::string key_file;   // its key
  bool insecure_skip_verify = false;
  // The same in PEM text, as a kubeconfig's *-data fields carry them; used
  // where the file is "".
  std::string ca_pem, cert_pem, key_pem;
};

// The most response-header bytes (every header line together) accepted.
inline constexpr size_t kMaxHeaderBytes = 64 * 1024;

// Bounds on one answer.
struct HttpLimits {
  // The body's bytes; 0 = no bound (a stream whose caller bounds it).
  size_t max_body_bytes = 1024 * 1024;
  // Named in the error: "etcd's short answers", "an API-server list page".
  std::string name = "an HTTP answer";
  // The transfer fails when fewer than `low_speed_bytes_per_second` arrive
  // on average over `low_speed_window` (0 s = no such bound: a watch, quiet
  // while nothing changes, or a call answered only when done, such as
  // defragment). The whole-transfer timeout bounds every request besides.
  long low_speed_bytes_per_second = 0;
  std::chrono::seconds low_speed_window{0};
};

struct HttpResponse {
  long status = 0;
  std::string body;
  int retry_after_seconds = -1;  // the Retry-After header (seconds), -1 when absent
};

class HttpClient {
 public:
  explicit HttpClient(TlsConfig tls = {});
  ~HttpClient();
  // While `*cancel` is true, a transfer in progress (an idle watch included)
  // ends within about a second, as if `on_data` had returned false.
  void set_cancel(const std::atomic<bool>* cancel) { cancel_ = cancel; }
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // A request with a JSON body ("" = no body). `headers` ("Name: value")
  // are sent besides "Content-Type: application/json", which one of them
  // may replace. A body over `limits.max_body_bytes` is an error.
  Result<HttpResponse> Send(const std::string& method, const std::string& url, const std::string& body,
                            std::chrono::milliseconds timeout, const std::vector<std::string>& headers = {},
                            const HttpLimits& limits = {});

  // A request whose response body is streamed to `on_data` as it arrives
  // (a snapshot, a watch). `on_data` returns false to stop (not an error).
  // `timeout` bounds the whole transfer; a stream answered with 200 that is
  // still open at the timeout ends without an error (a watch). The caller
  // bounds what it keeps of the stream (LineSplitter); `limits` bound the
  // whole body (0 = none) and its speed.
  Result<long> Stream(const std::string& method, const std::string& url, const std::string& body,
                      std::chrono::milliseconds timeout, const std::function<bool(std::string_view)>& on_data,
                      const std::vector<std::string>& headers = {},
                      const HttpLimits& limits = {.max_body_bytes = 0});

 private:
  Result<long> Stream(const std::string& method, const std::string& url, const std::string& body,
                      std::chrono::milliseconds timeout, const std::function<bool(std::string_view)>* on_data,
                      HttpResponse* collected, const std::vector<std::string>& headers,
                      const HttpLimits& limits);
  TlsConfig tls_;
  const std::atomic<bool>* cancel_ = nullptr;
  void* curl_ = nullptr;  // CURL*, reused between calls (keep-alive)
};

// The error an HTTP status means: 5xx (and 429) kUnavailable, 408 and 504
// kDeadlineExceeded, 409 and 412 kConflict, 401/403 kPermissionDenied, 404
// kNotFound, other 4xx kInvalidArgument. `what` names the call.
Error HttpStatusError(long status, const std::string& what, const std::string& body);

// kInvalidArgument naming the URL unless it is http:// or https://. For
// parsing flags and configurations, so that a bad URL is refused where it
// enters.
Status CheckHttpUrl(std::string_view url);

}  // namespace ruleplane
