// A proxy in front of a test's S3 server that fails the requests a test
// chooses: every other request passes through byte for byte (its Host
// header included, so that its Signature V4 still holds), one connection
// and one request at a time, and every request line is recorded. A request
// chosen to fail is read whole and answered 500 InternalError, as S3 does
// when a part cannot be stored.
//
//   S3FaultProxy::Fail fail = [](const std::string& method, const std::string& target) {
//     return method == "PUT" && target.find("partNumber=2&") != std::string::npos;
//   };
//   auto proxy = S3FaultProxy::Start(server->port(), fail);
//   ... (*proxy)->endpoint() ... (*proxy)->requests()
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/common/error.h"
#include "tests/support/loopback_listener.h"

namespace ruleplane::testing {

class S3FaultProxy {
 public:
  // `target` is the request's path and query as sent: "/bucket/key?partNumber=2&uploadId=...".
  using Fail = std::function<bool(const std::string& method, const std::string& target)>;
  static Result<std::unique_ptr<S3FaultProxy>> Start(int upstream_port, Fail fail);
  ~S3FaultProxy();

  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(listener_->port()); }
  // "PUT /bucket/key?partNumber=1&uploadId=...", in the order they came.
  std::vector<std::string> requests() const;
  int failed() const { return failed_; }

 private:
  S3FaultProxy() = default;
  void Serve(int connection);

  int upstream_port_ = 0;
  Fail fail_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> failed_{0};
  mutable std::mutex mutex_;
  std::vector<std::string> requests_;
  std::unique_ptr<LoopbackListener> listener_;  // last: its connections use the members above
};

}  // namespace ruleplane::testing
