// HttpServer: a small HTTP/1.1 server for GET endpoints (/metrics, /healthz,
// /readyz): reads one request per connection, answers from the handler and
// closes. Not for anything but plain, small GETs.
//
// One thread serves every connection without blocking on any (poll), so a
// client that sends half a request and waits, or reads its answer slowly,
// does not hold up the others: it is dropped at its read or write timeout.
// The handler runs on that thread, one request at a time. Writes never raise
// SIGPIPE (MSG_NOSIGNAL): a client that goes away mid-answer only ends its
// own connection.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "engine/common/error.h"

namespace ruleplane {

struct HttpAnswer {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

struct HttpServerOptions {
  std::chrono::milliseconds read_timeout{std::chrono::seconds(5)};    // the whole request, from accept
  std::chrono::milliseconds write_timeout{std::chrono::seconds(10)};  // the whole answer
  // Open connections; one more closes the oldest, so that idle clients
  // cannot lock a probe out.
  size_t max_connections = 64;
};

class HttpServer {
 public:
  using Handler = std::function<HttpAnswer(const std::string& path)>;

  // Listens on "HOST:PORT" (port 0: any free port).
  static Result<std::unique_ptr<HttpServer>> Start(const std::string& address, Handler handler,
                                                   HttpServerOptions options = {});
  ~HttpServer();  // stops
  int port() const { return port_; }

 private:
  HttpServer() = default;
  void Serve();

  Handler handler_;
  HttpServerOptions options_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace ruleplane
