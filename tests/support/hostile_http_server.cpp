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
  auto listener = LoopbackListener::Start([raw = server.get()](int connection) { raw->Serve(connection); },
                                          "the hostile server");
  if (!listener.ok()) return listener.error();
  server->listener_ = std::move(*listener);
  return server;
}

HostileHttpServer::~HostileHttpServer() {
  stopping_ = true;
  listener_.reset();
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
