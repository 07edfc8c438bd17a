#include "tests/support/hostile_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "tests/support/raw_http.h"

namespace ruleplane::testing {

HostileHttpServer::Answer HostileHttpServer::Fixed(long status, std::string body) {
  Answer answer;
  answer.status = status;
  answer.content_length = static_cast<int64_t>(body.size());
  answer.body_bytes = body.size();
  answer.prefix = std::move(body);
  return answer;
}

HostileHttpServer::Answer HostileHttpServer::Endless(std::string prefix, std::string filler) {
  Answer answer;
  answer.prefix = std::move(prefix);
  answer.filler = std::move(filler);
  return answer;
}

HostileHttpServer::Answer HostileHttpServer::Drip(std::string prefix, std::string filler, size_t bytes,
                                                  std::chrono::milliseconds interval) {
  Answer answer = Endless(std::move(prefix), std::move(filler));
  answer.piece_bytes = std::max<size_t>(bytes, 1);
  answer.interval = interval;
  return answer;
}

Result<std::unique_ptr<HostileHttpServer>> HostileHttpServer::Start(Handler handler) {
  std::unique_ptr<HostileHttpServer> server(new HostileHttpServer());
  server->handler_ = std::move(handler);
  server->listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (server->listener_ < 0 ||
      bind(server->listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      listen(server->listener_, 64) != 0) {
    return Error{
        ErrorCode::kIo, std::string("the hostile server cannot listen: ") + std::strerror(errno), {}};
  }
  socklen_t length = sizeof address;
  getsockname(server->listener_, reinterpret_cast<sockaddr*>(&address), &length);
  server->port_ = ntohs(address.sin_port);
  server->acceptor_ = std::thread([raw = server.get()] { raw->Accept(); });
  return server;
}

HostileHttpServer::~HostileHttpServer() {
  stopping_ = true;
  if (acceptor_.joinable()) acceptor_.join();
  if (listener_ >= 0) close(listener_);
  std::lock_guard<std::mutex> lock(mutex_);
  for (std::thread& connection : connections_) connection.join();
}

void HostileHttpServer::Accept() {
  while (!stopping_) {
    pollfd ready{listener_, POLLIN, 0};
    if (poll(&ready, 1, 100) <= 0) continue;
    const int connection = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) continue;
    std::lock_guard<std::mutex> lock(mutex_);
    connections_.emplace_back([this, connection] {
      Serve(connection);
      close(connection);
    });
  }
}

bool HostileHttpServer::Send(int connection, std::string_view data) {
  while (!data.empty()) {
    if (stopping_) return false;
    pollfd writable{connection, POLLOUT, 0};
    if (poll(&writable, 1, 100) <= 0) continue;  // the client reads nothing now
    if ((writable.revents & (POLLERR | POLLHUP)) != 0) return false;
    const ssize_t sent = send(connection, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (sent <= 0) return false;
    bytes_sent_ += static_cast<uint64_t>(sent);
    data.remove_prefix(static_cast<size_t>(sent));
  }
  return true;
}

void HostileHttpServer::Serve(int connection) {
  std::string method, path, request_body;
  if (!ReadRequest(connection, method, path, request_body)) return;
  ++requests_;
  const Answer answer = handler_(method, path);
  std::string head =
      "HTTP/1.1 " + std::to_string(answer.status) + " Hostile\r\nContent-Type: application/json\r\n";
  if (answer.endless_headers) {
    if (!Send(connection, head)) return;
    const std::string line = "X-Filler: " + std::string(100, 'h') + "\r\n";
    for (uint64_t sent = 0; sent < answer.cap_bytes && Send(connection, line); sent += line.size()) {
    }
  } else {
    if (answer.content_length >= 0)
      head += "Content-Length: " + std::to_string(answer.content_length) + "\r\n";
    head += "Connection: close\r\n\r\n";
    if (!Send(connection, head)) return;
    const uint64_t total = answer.body_bytes > 0 ? answer.body_bytes : answer.cap_bytes;
    std::string body = answer.prefix;
    uint64_t sent = 0;
    while (sent < total && !stopping_) {
      while (body.size() < answer.piece_bytes && !answer.filler.empty()) body += answer.filler;
      const size_t piece =
          static_cast<size_t>(std::min<uint64_t>({body.size(), answer.piece_bytes, total - sent}));
      if (piece == 0) break;
      if (!Send(connection, std::string_view(body).substr(0, piece))) return;
      body.erase(0, piece);
      sent += piece;
      if (answer.interval.count() > 0) std::this_thread::sleep_for(answer.interval);
    }
    if (answer.body_bytes > 0) return;  // a whole answer: close
  }
  // Endless, up to the cap: hold the connection until the client goes away.
  while (!stopping_) {
    pollfd gone{connection, POLLIN, 0};
    if (poll(&gone, 1, 100) > 0) {
      char probe;
      if (recv(connection, &probe, 1, MSG_DONTWAIT) <= 0) return;
    }
  }
}

}  // namespace ruleplane::testing
