// HttpClient: one HTTP(S) request over libcurl with a timeout, TLS with a CA,
// a client certificate and key. Transport failures are kUnavailable
// (connection refused, reset, DNS) or kDeadlineExceeded (timeout); an HTTP
// status is returned as it is and classified by the caller
// (HttpStatusError).
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "engine/common/error.h"

namespace ruleplane {

struct TlsConfig {
  std::string ca_file;    // verify the server against this CA ("" = system CAs)
  std::string cert_file;  // client certificate ("" = none)
  std::string key_file;   // its key
  bool insecure_skip_verify = false;
};

struct HttpResponse {
  long status = 0;
  std::string body;
};

class HttpClient {
 public:
  explicit HttpClient(TlsConfig tls = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // A request with a JSON body ("" = no body).
  Result<HttpResponse> Send(const std::string& method, const std::string& url, const std::string& body,
                            std::chrono::milliseconds timeout);

  // A request whose response body is streamed to `on_data` as it arrives
  // (a snapshot, a watch). `on_data` returns false to stop (not an error).
  // `timeout` bounds the whole transfer; a stream answered with 200 that is
  // still open at the timeout ends without an error (a watch).
  Result<long> Stream(const std::string& method, const std::string& url, const std::string& body,
                      std::chrono::milliseconds timeout,
                      const std::function<bool(std::string_view)>& on_data);

 private:
  Result<long> Stream(const std::string& method, const std::string& url, const std::string& body,
                      std::chrono::milliseconds timeout, const std::function<bool(std::string_view)>* on_data,
                      std::string* collected);
  TlsConfig tls_;
  void* curl_ = nullptr;  // CURL*, reused between calls (keep-alive)
};

// The error an HTTP status means: 5xx (and 429) kUnavailable, 408 and 504
// kDeadlineExceeded, 409 and 412 kConflict, 401/403 kPermissionDenied, 404
// kNotFound, other 4xx kInvalidArgument. `what` names the call.
Error HttpStatusError(long status, const std::string& what, const std::string& body);

}  // namespace ruleplane
