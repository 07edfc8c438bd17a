#include "platform/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "platform/http_client.h"
#include "platform/tls_files.h"

namespace ruleplane {
namespace {

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 500:
      return "Internal Server Error";
    default:
      return status >= 500 ? "Service Unavailable" : "Error";
  }
}

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxRequest = 16384;  // a GET's request line and headers

struct Connection {
  uint64_t id = 0;
  int fd = -1;          // -1 once closed
  SSL* ssl = nullptr;   // HTTPS: the TLS session on fd
  short tls_wants = 0;  // what the TLS session waits for (POLLIN, POLLOUT), 0 when nothing
  std::string request;
  std::string response;
  size_t sent = 0;
  bool answering = false;      // the request is complete: writing the response
  bool waiting = false;        // the request is complete: its slow reply is being computed
  Clock::time_point deadline;  // of reading the request, then of writing the response
};

// "GET /path?query HTTP/1.1"; nullopt when the request line is not
// "METHOD TARGET VERSION".
std::optional<HttpRequest> ParseRequest(const std::string& request) {
  const size_t line_end = std::min(request.find("\r\n"), request.size());
  const size_t first_space = request.find(' ');
  const size_t second_space = request.find(' ', first_space + 1);
  if (first_space == 0 || first_space >= line_end || second_space >= line_end) return std::nullopt;
  HttpRequest parsed;
  parsed.method = request.substr(0, first_space);
  const std::string target = request.substr(first_space + 1, second_space - first_space - 1);
  const size_t question = target.find('?');
  parsed.path = target.substr(0, question);
  if (question != std::string::npos) parsed.query = target.substr(question + 1);
  return parsed;
}

std::string Render(const HttpAnswer& answer) {
  return "HTTP/1.1 " + std::to_string(answer.status) + " " + Reason(answer.status) +
         "\r\nContent-Type: " + answer.content_type +
         "\r\nContent-Length: " + std::to_string(answer.body.size()) + "\r\nConnection: close\r\n\r\n" +
         answer.body;
}

void Close(Connection& connection) {
  if (connection.ssl != nullptr) {
    SSL_shutdown(connection.ssl);  // best effort: a close_notify if the socket takes it now
    ERR_clear_error();
    SSL_free(connection.ssl);
    connection.ssl = nullptr;
  }
  if (connection.fd >= 0) close(connection.fd);
  connection.fd = -1;
}

// Drops a client that ran out of time with a reset: the kernel frees the
// unsent part of its answer at once instead of holding it for a reader that
// may never come.
void Abort(Connection& connection) {
  if (connection.fd >= 0) {
    const linger reset{1, 0};
    setsockopt(connection.fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  }
  Close(connection);
}

enum class Io { kDone, kAgain, kEnd };  // some bytes moved; none now (poll); the connection ended

// After a TLS call that moved nothing: what it waits for, or the end.
Io TlsWait(Connection& connection, int result) {
  const int error = SSL_get_error(connection.ssl, result);
  ERR_clear_error();
  if (error == SSL_ERROR_WANT_READ) connection.tls_wants = POLLIN;
  if (error == SSL_ERROR_WANT_WRITE) connection.tls_wants = POLLOUT;
  return connection.tls_wants != 0 ? Io::kAgain : Io::kEnd;  // closed, or a failed handshake
}

Io ReadSome(Connection& connection, char* buffer, size_t size, size_t& got) {
  connection.tls_wants = 0;
  if (connection.ssl != nullptr) {
    const int result = SSL_read_ex(connection.ssl, buffer, size, &got);
    return result == 1 ? Io::kDone : TlsWait(connection, result);
  }
  while (true) {
    const ssize_t read_now = read(connection.fd, buffer, size);
    if (read_now > 0) {
      got = static_cast<size_t>(read_now);
      return Io::kDone;
    }
    if (read_now < 0 && errno == EINTR) continue;
    return read_now < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? Io::kAgain : Io::kEnd;
  }
}

Io WriteSome(Connection& connection, const char* data, size_t size, size_t& wrote) {
  connection.tls_wants = 0;
  if (connection.ssl != nullptr) {
    const int result = SSL_write_ex(connection.ssl, data, size, &wrote);
    return result == 1 ? Io::kDone : TlsWait(connection, result);
  }
  while (true) {
    const ssize_t sent = send(connection.fd, data, size, MSG_NOSIGNAL);
    if (sent > 0) {
      wrote = static_cast<size_t>(sent);
      return Io::kDone;
    }
    if (sent < 0 && errno == EINTR) continue;
    return sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? Io::kAgain : Io::kEnd;  // EPIPE: gone
  }
}

// Reads what the client sent, answers once the request is complete, and
// writes as much of the answer as the socket takes; closes (fd -1) when done
// or when the client is gone.
// `answer` sets the response (answering) or leaves the connection waiting
// for its slow reply.
void Advance(Connection& connection, const std::function<void(Connection&)>& answer) {
  if (!connection.answering) {
    char buffer[4096];
    Io io = Io::kDone;
    size_t got = 0;
    while ((io = ReadSome(connection, buffer, sizeof buffer, got)) == Io::kDone) {
      connection.request.append(buffer, got);
      if (connection.request.size() >= kMaxRequest) break;
    }
    const bool ended = io == Io::kEnd;
    const bool complete = connection.request.find("\r\n\r\n") != std::string::npos ||
                          connection.request.size() >= kMaxRequest || (ended && !connection.request.empty());
    if (!complete) {
      if (ended) Close(connection);
      return;
    }
    answer(connection);
    if (!connection.answering) return;
  }
  while (connection.sent < connection.response.size()) {
    size_t wrote = 0;
    const Io io = WriteSome(connection, connection.response.data() + connection.sent,
                            connection.response.size() - connection.sent, wrote);
    if (io == Io::kAgain) return;
    if (io == Io::kEnd) break;  // the client is gone (EPIPE, ECONNRESET)
    connection.sent += wrote;
  }
  Close(connection);
}

}  // namespace

struct HttpServer::TlsContext {
  ~TlsContext() { SSL_CTX_free(context); }
  SSL_CTX* context = nullptr;
};

namespace {

std::string OpenSslError() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  char text[256] = "unknown error";
  if (code != 0) ERR_error_string_n(code, text, sizeof text);
  return text;
}

}  // namespace

// A slow reply: its thread, then its answer.
struct HttpServer::Slow {
  uint64_t connection = 0;
  std::thread thread;
  bool done = false;  // under slow_mutex_
  HttpAnswer answer;
};

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const std::string& address, Handler handler,
                                                      HttpServerOptions options) {
  return Start(address,
               RequestHandler([handler = std::move(handler)](const HttpRequest& request) -> HttpReply {
                 if (request.method != "GET") return HttpAnswer{405, "text/plain", "only GET\n"};
                 return handler(request.path);
               }),
               options);
}

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const std::string& address, RequestHandler handler,
                                                      HttpServerOptions options) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) {
    return Error{ErrorCode::kInvalidArgument, "\"" + address + "\" is not HOST:PORT", {}};
  }
  std::string host = address.substr(0, colon);
  if (host.empty()) host = "0.0.0.0";
  sockaddr_in bind_to{};
  bind_to.sin_family = AF_INET;
  bind_to.sin_port = htons(static_cast<uint16_t>(std::atoi(address.c_str() + colon + 1)));
  if (inet_pton(AF_INET, host.c_str(), &bind_to.sin_addr) != 1) {
    return Error{ErrorCode::kInvalidArgument, "\"" + host + "\" is not an IPv4 address", {}};
  }
  std::unique_ptr<HttpServer> server(new HttpServer());
  if (options.tls) {
    // An expired or unreadable certificate, or a key of another one, named by its file.
    TlsConfig files;
    files.cert_file = options.tls->cert_file;
    files.key_file = options.tls->key_file;
    if (Status usable = CheckTlsFiles(files, std::chrono::system_clock::now(), "server"); !usable.ok())
      return usable.error();
    server->tls_ = std::make_unique<TlsContext>();
    SSL_CTX* context = server->tls_->context = SSL_CTX_new(TLS_server_method());
    if (context == nullptr) return Error{ErrorCode::kInternal, "TLS: " + OpenSslError(), {}};
    SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
    // Written as the socket takes it, from a buffer that may move between calls.
    SSL_CTX_set_mode(context, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    if (SSL_CTX_use_certificate_chain_file(context, options.tls->cert_file.c_str()) != 1) {
      return Error{ErrorCode::kInvalidArgument, options.tls->cert_file + ": " + OpenSslError(), {}};
    }
    if (SSL_CTX_use_PrivateKey_file(context, options.tls->key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(context) != 1) {
      return Error{ErrorCode::kInvalidArgument, options.tls->key_file + ": " + OpenSslError(), {}};
    }
    if (const std::string& client_ca = options.tls->client_ca_file; !client_ca.empty()) {
      STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(client_ca.c_str());
      if (names == nullptr || SSL_CTX_load_verify_locations(context, client_ca.c_str(), nullptr) != 1) {
        if (names != nullptr) sk_X509_NAME_pop_free(names, X509_NAME_free);
        return Error{
            ErrorCode::kInvalidArgument, client_ca + ": not a CA certificate (PEM): " + OpenSslError(), {}};
      }
      SSL_CTX_set_client_CA_list(context, names);  // takes `names`
      SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nullptr);
    }
  }
  server->handler_ = std::move(handler);
  server->options_ = options;
  server->wake_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (server->wake_ < 0) return Error{ErrorCode::kIo, std::string("eventfd: ") + std::strerror(errno), {}};
  server->listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  const int yes = 1;
  setsockopt(server->listener_, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  if (bind(server->listener_, reinterpret_cast<sockaddr*>(&bind_to), sizeof bind_to) != 0 ||
      listen(server->listener_, 16) != 0) {
    return Error{ErrorCode::kIo, "cannot listen on " + address + ": " + std::strerror(errno), {}};
  }
  socklen_t length = sizeof bind_to;
  getsockname(server->listener_, reinterpret_cast<sockaddr*>(&bind_to), &length);
  server->port_ = ntohs(bind_to.sin_port);
  server->thread_ = std::thread([raw = server.get()] { raw->Serve(); });
  return server;
}

HttpServer::~HttpServer() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  if (listener_ >= 0) close(listener_);
  if (wake_ >= 0) close(wake_);
}

bool HttpServer::StartSlow(uint64_t id, std::function<HttpAnswer()> slow) {
  std::lock_guard<std::mutex> lock(slow_mutex_);
  if (slow_.size() >= options_.max_slow) return false;
  auto entry = std::make_unique<Slow>();
  entry->connection = id;
  Slow* raw = entry.get();
  entry->thread = std::thread([this, raw, slow = std::move(slow)] {
    HttpAnswer answer;
    try {
      answer = slow();
    } catch (const std::exception& error) {
      answer = {500, "text/plain", std::string("internal error: ") + error.what() + "\n"};
    } catch (...) {
      answer = {500, "text/plain", "internal error\n"};
    }
    {
      std::lock_guard<std::mutex> done(slow_mutex_);
      raw->answer = std::move(answer);
      raw->done = true;
    }
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t woke = write(wake_, &one, sizeof one);
  });
  slow_.push_back(std::move(entry));
  return true;
}

void HttpServer::Serve() {
  // OpenSSL writes with write(), not send(MSG_NOSIGNAL): SIGPIPE, blocked on
  // this thread alone, stays pending instead of ending the process, and the
  // write fails with EPIPE.
  sigset_t pipe_signal;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
  std::vector<Connection> connections;
  uint64_t next_id = 0;
  auto respond = [&](Connection& connection, const HttpAnswer& answer) {
    connection.response = Render(answer);
    connection.waiting = false;
    connection.answering = true;
    connection.deadline = Clock::now() + options_.write_timeout;
  };
  auto answer = [&](Connection& connection) {
    std::optional<HttpRequest> request = ParseRequest(connection.request);
    if (!request) return respond(connection, {400, "text/plain", "bad request\n"});
    // A certificate that did not verify ended the handshake; one that is here verified.
    request->client_verified = connection.ssl != nullptr &&
                               SSL_get0_peer_certificate(connection.ssl) != nullptr &&
                               SSL_get_verify_result(connection.ssl) == X509_V_OK;
    HttpReply reply;
    try {
      reply = handler_(*request);
    } catch (const std::exception& error) {
      return respond(connection, {500, "text/plain", std::string("internal error: ") + error.what() + "\n"});
    } catch (...) {
      return respond(connection, {500, "text/plain", "internal error\n"});
    }
    if (!reply.slow) return respond(connection, reply.answer);
    if (!StartSlow(connection.id, std::move(reply.slow))) {
      return respond(connection, {503, "text/plain", "too many slow requests in progress\n"});
    }
    connection.waiting = true;
    connection.deadline = Clock::time_point::max();  // the slow reply bounds its own time
  };
  while (!stopping_) {
    const Clock::time_point now = Clock::now();
    std::erase_if(connections, [&](Connection& connection) {
      if (now < connection.deadline) return false;
      Abort(connection);  // too slow a client
      return true;
    });
    std::vector<pollfd> fds = {{listener_, POLLIN, 0}, {wake_, POLLIN, 0}};
    auto wait = std::chrono::milliseconds(200);
    for (const Connection& connection : connections) {
      const short events = connection.waiting     ? 0
                           : connection.tls_wants ? connection.tls_wants
                           : connection.answering ? POLLOUT
                                                  : POLLIN;
      fds.push_back({connection.fd, events, 0});
      if (!connection.waiting)
        wait = std::min(wait, std::chrono::ceil<std::chrono::milliseconds>(connection.deadline - now));
    }
    if (poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(wait.count(), 0))) <= 0) continue;

    for (size_t i = 0; i < connections.size(); ++i) {
      const short revents = fds[i + 2].revents;
      if (revents == 0) continue;
      if (!connections[i].waiting) {
        Advance(connections[i], answer);
      } else if ((revents & (POLLERR | POLLHUP | POLLNVAL)) != 0) {
        Close(connections[i]);  // gone while its reply is computed: the reply is dropped
      }
    }
    if ((fds[1].revents & POLLIN) != 0) {
      uint64_t count = 0;
      [[maybe_unused]] const ssize_t drained = read(wake_, &count, sizeof count);
      std::vector<std::unique_ptr<Slow>> finished;
      {
        std::lock_guard<std::mutex> lock(slow_mutex_);
        for (auto& entry : slow_)
          if (entry->done) finished.push_back(std::move(entry));
        std::erase(slow_, nullptr);
      }
      for (auto& entry : finished) {
        entry->thread.join();
        for (Connection& connection : connections) {
          if (connection.id == entry->connection && connection.fd >= 0 && connection.waiting) {
            respond(connection, entry->answer);
            Advance(connection, answer);  // writes what the socket takes now
          }
        }
      }
    }
    std::erase_if(connections, [](const Connection& connection) { return connection.fd < 0; });
    if ((fds[0].revents & POLLIN) != 0) {
      while (true) {
        const int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) break;
        if (connections.size() >= options_.max_connections) {
          // Room is made by the oldest client still sending its request (idle
          // or slow): a reply being computed or written is never dropped for a
          // newcomer. When every connection has one, the newcomer is turned away.
          const auto reading =
              std::find_if(connections.begin(), connections.end(),
                           [](const Connection& open) { return !open.waiting && !open.answering; });
          if (reading == connections.end()) {
            close(fd);
            continue;
          }
          Close(*reading);
          connections.erase(reading);
        }
        Connection connection;
        connection.id = ++next_id;
        connection.fd = fd;
        if (tls_ != nullptr) {
          connection.ssl = SSL_new(tls_->context);
          if (connection.ssl == nullptr || SSL_set_fd(connection.ssl, fd) != 1) {
            Close(connection);
            continue;
          }
          SSL_set_accept_state(connection.ssl);
        }
        connection.deadline = Clock::now() + options_.read_timeout;
        connections.push_back(std::move(connection));
      }
    }
  }
  for (Connection& connection : connections) Close(connection);
  std::vector<std::unique_ptr<Slow>> remaining;
  {
    std::lock_guard<std::mutex> lock(slow_mutex_);
    remaining.swap(slow_);
  }
  for (auto& entry : remaining) entry->thread.join();
}

}  // namespace ruleplane
