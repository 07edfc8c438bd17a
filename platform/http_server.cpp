#include "platform/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

namespace ruleplane {
namespace {

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    default:
      return status >= 500 ? "Service Unavailable" : "Error";
  }
}

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxRequest = 16384;  // a GET's request line and headers

struct Connection {
  int fd = -1;  // -1 once closed
  std::string request;
  std::string response;
  size_t sent = 0;
  bool answering = false;      // the request is complete: writing the response
  Clock::time_point deadline;  // of reading the request, then of writing the response
};

// "GET /path HTTP/1.1": the whole response to it, from the handler.
std::string Response(const std::string& request, const HttpServer::Handler& handler) {
  const size_t first_space = request.find(' ');
  const size_t second_space = request.find(' ', first_space + 1);
  HttpAnswer answer;
  if (first_space == std::string::npos || second_space == std::string::npos) {
    answer = {400, "text/plain", "bad request\n"};
  } else if (request.compare(0, first_space, "GET") != 0) {
    answer = {405, "text/plain", "only GET\n"};
  } else {
    std::string path = request.substr(first_space + 1, second_space - first_space - 1);
    path = path.substr(0, path.find('?'));
    answer = handler(path);
  }
  return "HTTP/1.1 " + std::to_string(answer.status) + " " + Reason(answer.status) +
         "\r\nContent-Type: " + answer.content_type +
         "\r\nContent-Length: " + std::to_string(answer.body.size()) + "\r\nConnection: close\r\n\r\n" +
         answer.body;
}

// Reads what the client sent, answers once the request is complete, and
// writes as much of the answer as the socket takes; closes (fd -1) when done
// or when the client is gone.
void Advance(Connection& connection, const HttpServer::Handler& handler,
             std::chrono::milliseconds write_timeout) {
  auto finish = [&] {
    close(connection.fd);
    connection.fd = -1;
  };
  if (!connection.answering) {
    char buffer[4096];
    bool ended = false;
    while (true) {
      const ssize_t got = read(connection.fd, buffer, sizeof buffer);
      if (got > 0) {
        connection.request.append(buffer, static_cast<size_t>(got));
        if (connection.request.size() >= kMaxRequest) break;
        continue;
      }
      if (got < 0 && errno == EINTR) continue;
      ended = got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
      break;
    }
    const bool complete = connection.request.find("\r\n\r\n") != std::string::npos ||
                          connection.request.size() >= kMaxRequest || (ended && !connection.request.empty());
    if (!complete) {
      if (ended) finish();
      return;
    }
    connection.response = Response(connection.request, handler);
    connection.answering = true;
    connection.deadline = Clock::now() + write_timeout;
  }
  while (connection.sent < connection.response.size()) {
    const ssize_t wrote = send(connection.fd, connection.response.data() + connection.sent,
                               connection.response.size() - connection.sent, MSG_NOSIGNAL);
    if (wrote > 0) {
      connection.sent += static_cast<size_t>(wrote);
    } else if (wrote < 0 && errno == EINTR) {
      continue;
    } else if (wrote < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return;
    } else {
      break;  // the client is gone (EPIPE, ECONNRESET)
    }
  }
  finish();
}

}  // namespace

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const std::string& address, Handler handler,
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
  server->handler_ = std::move(handler);
  server->options_ = options;
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
}

void HttpServer::Serve() {
  std::vector<Connection> connections;
  while (!stopping_) {
    const Clock::time_point now = Clock::now();
    std::erase_if(connections, [&](const Connection& connection) {
      if (now < connection.deadline) return false;
      close(connection.fd);  // too slow a client
      return true;
    });
    std::vector<pollfd> fds = {{listener_, POLLIN, 0}};
    auto wait = std::chrono::milliseconds(200);
    for (const Connection& connection : connections) {
      fds.push_back({connection.fd, static_cast<short>(connection.answering ? POLLOUT : POLLIN), 0});
      wait = std::min(wait, std::chrono::ceil<std::chrono::milliseconds>(connection.deadline - now));
    }
    if (poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(wait.count(), 0))) <= 0) continue;

    for (size_t i = 0; i < connections.size(); ++i) {
      if (fds[i + 1].revents != 0) Advance(connections[i], handler_, options_.write_timeout);
    }
    std::erase_if(connections, [](const Connection& connection) { return connection.fd < 0; });
    if ((fds[0].revents & POLLIN) != 0) {
      while (true) {
        const int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) break;
        if (connections.size() >= options_.max_connections) {
          close(connections.front().fd);
          connections.erase(connections.begin());
        }
        Connection connection;
        connection.fd = fd;
        connection.deadline = Clock::now() + options_.read_timeout;
        connections.push_back(std::move(connection));
      }
    }
  }
  for (const Connection& connection : connections)
    if (connection.fd >= 0) close(connection.fd);
}

}  // namespace ruleplane
