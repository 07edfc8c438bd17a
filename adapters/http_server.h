// HttpServer: a small HTTP/1.1 server for GET endpoints (/metrics, /healthz,
// /readyz): one thread accepts, reads one request per connection, answers
// from the handler and closes. Not for anything but plain, small GETs.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>

#include "engine/common/error.h"

namespace ruleplane {

struct HttpAnswer {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

class HttpServer {
 public:
  using Handler = std::function<HttpAnswer(const std::string& path)>;

  // Listens on "HOST:PORT" (port 0: any free port).
  static Result<std::unique_ptr<HttpServer>> Start(const std::string& address, Handler handler);
  ~HttpServer();  // stops
  int port() const { return port_; }

 private:
  HttpServer() = default;
  void Serve();

  Handler handler_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace ruleplane
