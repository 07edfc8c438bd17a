#include "tests/support/slow_snapshot_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "platform/http_client.h"
#include "tests/support/raw_http.h"

namespace ruleplane::testing {
namespace {

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
  auto listener =
      LoopbackListener::Start([raw = proxy.get()](int connection) { raw->Serve(connection); }, "the proxy");
  if (!listener.ok()) return listener.error();
  proxy->listener_ = std::move(*listener);
  return proxy;
}

SlowSnapshotProxy::~SlowSnapshotProxy() {
  stopping_ = true;
  listener_.reset();
}

void SlowSnapshotProxy::Serve(int connection) {
  std::string method, path, body;
  if (!ReadRequest(connection, method, path, body)) return;
  HttpClient member;
  const bool snapshot = path == "/v3/maintenance/snapshot";
  auto answer = member.Send(method, member_url_ + path, body,
                            snapshot ? std::chrono::milliseconds(std::chrono::minutes(2))
                                     : std::chrono::milliseconds(std::chrono::seconds(10)),
                            {}, HttpLimits{.max_body_bytes = 0, .name = "a proxied answer"});
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
