#include "tests/support/s3_fault_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "tests/support/raw_http.h"

namespace ruleplane::testing {
namespace {

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// The head without the header lines named `drop` (lower-case, with ':').
std::string WithoutHeaders(const std::string& head, const std::vector<std::string>& drop) {
  std::string out;
  size_t at = 0;
  while (at < head.size()) {
    size_t end = head.find("\r\n", at);
    if (end == std::string::npos) end = head.size();
    const std::string line = head.substr(at, end - at);
    const std::string lower = Lower(line);
    if (std::none_of(drop.begin(), drop.end(),
                     [&](const std::string& name) { return lower.rfind(name, 0) == 0; }))
      out += line + "\r\n";
    at = end + 2;
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<S3FaultProxy>> S3FaultProxy::Start(int upstream_port, Fail fail) {
  std::unique_ptr<S3FaultProxy> proxy(new S3FaultProxy());
  proxy->upstream_port_ = upstream_port;
  proxy->fail_ = std::move(fail);
  auto listener = LoopbackListener::Start([raw = proxy.get()](int connection) { raw->Serve(connection); },
                                          "the S3 proxy");
  if (!listener.ok()) return listener.error();
  proxy->listener_ = std::move(*listener);
  return proxy;
}

S3FaultProxy::~S3FaultProxy() {
  stopping_ = true;
  listener_.reset();
}

std::vector<std::string> S3FaultProxy::requests() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return requests_;
}

void S3FaultProxy::Serve(int connection) {
  std::string data;
  char buffer[64 * 1024];
  size_t head_end;
  while ((head_end = data.find("\r\n\r\n")) == std::string::npos) {
    if (data.size() > 64 * 1024 || stopping_) return;
    const ssize_t got = recv(connection, buffer, sizeof buffer, 0);
    if (got <= 0) return;
    data.append(buffer, static_cast<size_t>(got));
  }
  const std::string head = data.substr(0, head_end + 2);  // every line with its CRLF
  std::string body = data.substr(head_end + 4);
  const size_t space = head.find(' ');
  const size_t second = head.find(' ', space + 1);
  if (space == std::string::npos || second == std::string::npos) return;
  const std::string method = head.substr(0, space);
  const std::string target = head.substr(space + 1, second - space - 1);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    requests_.push_back(method + " " + target);
  }
  const std::string lower = Lower(head);
  size_t length = 0;
  if (const size_t at = lower.find("\r\ncontent-length:"); at != std::string::npos)
    length = std::strtoul(head.c_str() + at + 17, nullptr, 10);
  // The proxy answers Expect: 100-continue itself, and forwards the body whole.
  if (lower.find("\r\nexpect: 100-continue") != std::string::npos &&
      !SendAll(connection, "HTTP/1.1 100 Continue\r\n\r\n"))
    return;
  while (body.size() < length) {
    const ssize_t got = recv(connection, buffer, sizeof buffer, 0);
    if (got <= 0) return;
    body.append(buffer, static_cast<size_t>(got));
  }
  if (fail_(method, target)) {
    ++failed_;
    const std::string error =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>InternalError</Code>"
        "<Message>the test proxy failed this request</Message></Error>";
    SendAll(connection,
            "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/xml\r\nContent-Length: " +
                std::to_string(error.size()) + "\r\nConnection: close\r\n\r\n" + error);
    return;
  }
  const int upstream = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (upstream < 0) return;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(upstream_port_));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(upstream, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      SendAll(upstream,
              WithoutHeaders(head, {"expect:", "connection:"}) + "Connection: close\r\n\r\n" + body)) {
    for (ssize_t got; !stopping_ && (got = recv(upstream, buffer, sizeof buffer, 0)) > 0;)
      if (!SendAll(connection, std::string_view(buffer, static_cast<size_t>(got)))) break;
  }
  close(upstream);
}

}  // namespace ruleplane::testing
