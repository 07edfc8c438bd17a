#include "tests/support/slow_snapshot_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "adapters/http_client.h"

namespace ruleplane::testing {
namespace {

// Sends everything, without SIGPIPE; false when the peer went away.
bool SendAll(int connection, std::string_view data) {
  while (!data.empty()) {
    const ssize_t sent = send(connection, data.data(), data.size(), MSG_NOSIGNAL);
    if (sent <= 0) return false;
    data.remove_prefix(static_cast<size_t>(sent));
  }
  return true;
}

// One request: method, path and body (by Content-Length); false when the
// connection ends first.
bool ReadRequest(int connection, std::string& method, std::string& path, std::string& body) {
  std::string data;
  char buffer[4096];
  size_t header_end;
  while ((header_end = data.find("\r\n\r\n")) == std::string::npos) {
    const ssize_t got = recv(connection, buffer, sizeof buffer, 0);
    if (got <= 0) return false;
    data.append(buffer, static_cast<size_t>(got));
  }
  const std::string head = data.substr(0, header_end);
  const size_t space = head.find(' ');
  const size_t second = head.find(' ', space + 1);
  if (space == std::string::npos || second == std::string::npos) return false;
  method = head.substr(0, space);
  path = head.substr(space + 1, second - space - 1);
  size_t length = 0;
  std::string lower = head;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (const size_t at = lower.find("\r\ncontent-length:"); at != std::string::npos) {
    length = std::strtoul(head.c_str() + at + 17, nullptr, 10);
  }
  body = data.substr(header_end + 4);
  while (body.size() < length) {
    const ssize_t got = recv(connection, buffer, sizeof buffer, 0);
    if (got <= 0) return false;
    body.append(buffer, static_cast<size_t>(got));
  }
  return true;
}

std::string Head(long status, size_t length) {
  return "HTTP/1.1 " + std::to_string(status) + " Proxied\r\nContent-Type: application/json\r\n" +
         "Content-Length: " + std::to_string(length) + "\r\nConnection: close\r\n\r\n";
}

}  // namespace

Result<std::unique_ptr<SlowSnapshotProxy>> SlowSnapshotProxy::Start(std::string member_url,
                                                                    std::chrono::milliseconds drip) {
  std::unique_ptr<SlowSnapshotProxy> proxy(new SlowSnapshotProxy());
  proxy->member_url_ = std::move(member_url);
  proxy->drip_ = drip;
  proxy->listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = 0;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (proxy->listener_ < 0 ||
      bind(proxy->listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      listen(proxy->listener_, 64) != 0) {
    return Error{ErrorCode::kIo, std::string("the proxy cannot listen: ") + std::strerror(errno), {}};
  }
  socklen_t length = sizeof address;
  getsockname(proxy->listener_, reinterpret_cast<sockaddr*>(&address), &length);
  proxy->port_ = ntohs(address.sin_port);
  proxy->acceptor_ = std::thread([raw = proxy.get()] { raw->Accept(); });
  return proxy;
}

SlowSnapshotProxy::~SlowSnapshotProxy() {
  stopping_ = true;
  if (acceptor_.joinable()) acceptor_.join();
  if (listener_ >= 0) close(listener_);
  std::lock_guard<std::mutex> lock(mutex_);
  for (std::thread& connection : connections_) connection.join();
}

void SlowSnapshotProxy::Accept() {
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

void SlowSnapshotProxy::Serve(int connection) {
  std::string method, path, body;
  if (!ReadRequest(connection, method, path, body)) return;
  HttpClient member;
  const bool snapshot = path == "/v3/maintenance/snapshot";
  auto answer = member.Send(method, member_url_ + path, body,
                            snapshot ? std::chrono::milliseconds(std::chrono::minutes(2))
                                     : std::chrono::milliseconds(std::chrono::seconds(10)));
  if (!answer.ok()) {
    const std::string error = "{\"error\":\"the proxy: " + answer.error().message + "\",\"code\":14}";
    SendAll(connection, Head(503, error.size()) + error);
    return;
  }
  if (!snapshot || answer->status != 200) {
    SendAll(connection, Head(answer->status, answer->body.size()) + answer->body);
    return;
  }
  ++in_progress_;
  constexpr int kSlices = 60;
  const std::string_view stream = answer->body;
  bool sent = SendAll(connection, Head(200, stream.size()));
  const size_t slice = stream.size() / kSlices + 1;
  for (size_t at = 0; sent && at < stream.size(); at += slice) {
    std::this_thread::sleep_for(drip_ / kSlices);
    // A client that went away shows as the end of its side of the connection.
    char probe;
    if (stopping_ || recv(connection, &probe, 1, MSG_DONTWAIT | MSG_PEEK) == 0) {
      sent = false;
      break;
    }
    sent = SendAll(connection, stream.substr(at, slice));
  }
  ++(sent ? completed_ : abandoned_);
  --in_progress_;
}

}  // namespace ruleplane::testing
