// HttpServer: a small HTTP/1.1 server for bodiless requests (/metrics,
// /healthz, /readyz, member-agent's /snapshot/full): reads one request per
// connection (its head; a body is not read), answers from the handler and
// closes. Not for anything but plain, small requests.
//
// One thread serves every connection without blocking on any (poll), so a
// client that sends half a request and waits, or reads its answer slowly,
// does not hold up the others: it is dropped at its read or write timeout.
// The handler runs on that thread, one request at a time; an answer that
// takes long (a snapshot) is a `slow` reply, computed on a thread of its own
// while the server goes on serving the others, and written when it is ready.
// Writes never raise SIGPIPE (MSG_NOSIGNAL): a client that goes away
// mid-answer only ends its own connection. With `tls`, every connection is
// HTTPS (OpenSSL, non-blocking like the rest: a client that stalls its
// handshake is dropped at its read timeout like any other).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/common/error.h"

namespace ruleplane {

struct HttpAnswer {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // "/snapshot/full"
  std::string query;   // after '?', as sent: "final=true"
  // HTTPS with HttpServerTls::client_ca_file: the client presented a
  // certificate that verified against that CA.
  bool client_verified = false;
};

// What the handler answers: `answer` at once, or, when `slow` is set, what
// `slow` returns, called on a thread of its own. A slow reply must end by
// itself (the server waits for it when it stops); an exception it throws is
// answered 500. Until it returns, its client's timeouts do not run.
struct HttpReply {
  HttpReply(HttpAnswer now = {}) : answer(std::move(now)) {}  // NOLINT: an answer is a reply
  static HttpReply Slow(std::function<HttpAnswer()> later) {
    HttpReply reply;
    reply.slow = std::move(later);
    return reply;
  }
  HttpAnswer answer;
  std::function<HttpAnswer()> slow;
};

// The server's certificate (chain) and key, PEM files. With
// `client_ca_file`, clients are asked for a certificate: one that does not
// verify against that CA ends the handshake, and a request that came with one
// that does is `client_verified` (a client without one is served, unverified,
// so that the handler decides per path).
struct HttpServerTls {
  std::string cert_file;
  std::string key_file;
  std::string client_ca_file = {};
};

struct HttpServerOptions {
  std::chrono::milliseconds read_timeout{std::chrono::seconds(5)};    // the whole request, from accept
  std::chrono::milliseconds write_timeout{std::chrono::seconds(10)};  // the whole answer
  // Open connections; one more closes the oldest that is still sending its
  // request, so that idle clients cannot lock a probe out, and never one
  // whose reply is being computed or written (with none to close, the new
  // one is closed).
  size_t max_connections = 64;
  // Slow replies in progress; one more is answered 503 at once.
  size_t max_slow = 8;
  std::optional<HttpServerTls> tls;
};

class HttpServer {
 public:
  // GETs only (anything else is 405), by path (the query left out).
  using Handler = std::function<HttpAnswer(const std::string& path)>;
  // Any method; the handler decides.
  using RequestHandler = std::function<HttpReply(const HttpRequest& request)>;

  // Listens on "HOST:PORT" (port 0: any free port).
  static Result<std::unique_ptr<HttpServer>> Start(const std::string& address, Handler handler,
                                                   HttpServerOptions options = {});
  static Result<std::unique_ptr<HttpServer>> Start(const std::string& address, RequestHandler handler,
                                                   HttpServerOptions options = {});
  ~HttpServer();  // stops; waits for the slow replies in progress
  int port() const { return port_; }

 private:
  struct Slow;
  struct TlsContext;
  HttpServer() = default;
  void Serve();
  // Starts `reply.slow` for connection `id`; false when too many are running.
  bool StartSlow(uint64_t id, std::function<HttpAnswer()> slow);

  RequestHandler handler_;
  HttpServerOptions options_;
  std::unique_ptr<TlsContext> tls_;  // null: plain HTTP
  int listener_ = -1;
  int wake_ = -1;  // an eventfd a finished slow reply writes, to wake poll
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::mutex slow_mutex_;
  std::vector<std::unique_ptr<Slow>> slow_;  // in progress or finished, not yet written
  std::thread thread_;
};

}  // namespace ruleplane
