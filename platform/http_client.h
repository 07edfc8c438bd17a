// HttpClient: one HTTP(S) request over libcurl with a timeout, TLS with a CA,
// a client certificate and key. Only http:// and https:// are spoken (any
// other scheme is kInvalidArgument before anything is sent; libcurl is
// restricted to both, redirects included); a header with a line break is
// refused. Transport failures are kUnavailable
// (connection refused, reset, DNS) or kDeadlineExceeded (timeout); an HTTP
// status is returned as it is and classified by the caller
// (HttpStatusError).
//
// Bounds on what a server sends, checked while it arrives (docs/bounds.md, "Network
// answers"): the response headers at most kMaxHeaderBytes (64 KiB) in all; a
// body kept by Send at most HttpLimits::max_body_bytes (each caller names
// the bound for its kind of request); a streamed body at most
// max_body_bytes in all when that is not 0; no transfer slower than
// HttpLimits' low-speed bound when one is set. Each is kUnavailable naming
// the bound, and the transfer stops there. Bodies are never decompressed
// (no Accept-Encoding is sent).
//
// Exchange is the general form for object stores: a request body of any
// size read in pieces (a part of a file, never held whole), the answer's
// headers kept (ETag, Content-Length), a 2xx body streamed while another
// status's body is kept (at most kMaxErrorBodyBytes) to say why.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
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

// The most bytes of a non-2xx body that Exchange keeps (an S3 error document).
inline constexpr size_t kMaxErrorBodyBytes = 64 * 1024;

struct HttpResponse {
  long status = 0;
  std::string body;
  int retry_after_seconds = -1;  // the Retry-After header (seconds), -1 when absent
  // Exchange only: the final answer's headers in order, names lower-cased,
  // values without surrounding blanks.
  std::vector<std::pair<std::string, std::string>> headers;
  // The value of the header `name` (lower-case); "" when absent.
  std::string Header(std::string_view name) const;
};

// One request for HttpClient::Exchange.
struct HttpExchange {
  std::string method;
  std::string url;
  std::vector<std::string> headers;  // "Name: value"; no Content-Type is added
  // The body: `body` (held in memory: an XML document), or, when `read_body`
  // is set, `body_size` bytes read from it, at most `size` a call into
  // `buffer`; it returns how many it wrote. A source that returns 0 before
  // `body_size` bytes (a file that shrank, a read error) ends the request:
  // kIo.
  std::string body;
  std::function<size_t(char* buffer, size_t size)> read_body;
  int64_t body_size = 0;
  // A 2xx body goes to `on_data` as it arrives when set (false stops the
  // transfer, not an error), else to HttpResponse::body (limits bound it).
  // Another status's body is kept in HttpResponse::body, cut at
  // kMaxErrorBodyBytes.
  std::function<bool(std::string_view)> on_data;
  // The whole request; running out of it is kDeadlineExceeded, also for a
  // 2xx body being streamed (a transfer that did not finish).
  std::chrono::milliseconds timeout{30'000};
  HttpLimits limits;
};

class HttpClient {
 public:
  explicit HttpClient(TlsConfig tls = {});
  ~HttpClient();
  // While `*cancel` is true, a transfer in progress (an idle watch included)
  // ends within about a second, as if `on_data` had returned false.
  void set_cancel(const std::atomic<bool>* cancel) { cancel_ = cancel; }
  const std::atomic<bool>* cancel() const { return cancel_; }
  // Asked right before each request goes out: an error means it is not
  // sent, and the call fails with that error (a controller that lost its
  // Lease sends nothing more).
  void set_guard(std::function<Status()> guard) { guard_ = std::move(guard); }
  const std::function<Status()>& guard() const { return guard_; }
  // "HOST:PORT:ADDRESS:PORT" each: a request to HOST:PORT connects to
  // ADDRESS:PORT instead, and the server's certificate is still verified for
  // HOST (libcurl's CONNECT_TO): a Pod reached at its IP, its certificate
  // issued for its DNS name.
  void set_connect_to(std::vector<std::string> connect_to) { connect_to_ = std::move(connect_to); }
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

  // A request as HttpExchange describes it. Transport failures as for Send;
  // an HTTP status is returned as it is.
  Result<HttpResponse> Exchange(const HttpExchange& exchange);

 private:
  Result<long> Stream(const std::string& method, const std::string& url, const std::string& body,
                      std::chrono::milliseconds timeout, const std::function<bool(std::string_view)>* on_data,
                      HttpResponse* collected, const std::vector<std::string>& headers,
                      const HttpLimits& limits, const HttpExchange* exchange = nullptr);
  TlsConfig tls_;
  const std::atomic<bool>* cancel_ = nullptr;
  std::function<Status()> guard_;
  std::vector<std::string> connect_to_;
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
