// HttpClient: one HTTP(S) request over libcurl with a timeout, TLS with a CA,
// a client certificate and key. Only http:// and https:// are spoken (any
// other scheme is kInvalidArgument before anything is sent; libcurl is
// restricted to both, redirects included); a header with a line break is
// refused. Transport failures are kUnavailable
// (connection refused, reset, DNS) or kDeadlineExceeded (timeout); an HTTP
// status is returned as it is and classified by the caller
// (HttpStatusError).
#pragma once

#include <atomic>
#include <chrono>
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
  // may replace.
  Result<HttpResponse> Send(const std::string& method, const std::string& url, const std::string& body,
                            std::chrono::milliseconds timeout, const std::vector<std::string>& headers = {});

  // A request whose response body is streamed to `on_data` as it arrives
  // (a snapshot, a watch). `on_data` returns false to stop (not an error).
  // `timeout` bounds the whole transfer; a stream answered with 200 that is
  // still open at the timeout ends without an error (a watch).
  Result<long> Stream(const std::string& method, const std::string& url, const std::string& body,
                      std::chrono::milliseconds timeout, const std::function<bool(std::string_view)>& on_data,
                      const std::vector<std::string>& headers = {});

 private:
  Result<long> Stream(const std::string& method, const std::string& url, const std::string& body,
                      std::chrono::milliseconds timeout, const std::function<bool(std::string_view)>* on_data,
                      HttpResponse* collected, const std::vector<std::string>& headers);
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
