// The accept loop the tests' own servers share (the hostile HTTP server, the
// slow snapshot proxy): a TCP listener on 127.0.0.1, on a port the kernel
// chooses, that serves each connection on a thread of its own and closes it.
//
//   auto listener = LoopbackListener::Start([this](int connection) { Serve(connection); }, "the proxy");
//   ... "http://127.0.0.1:" + std::to_string((*listener)->port()) ...
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/common/error.h"

namespace ruleplane::testing {

class LoopbackListener {
 public:
  // `who` names the server in the error when it cannot listen.
  static Result<std::unique_ptr<LoopbackListener>> Start(std::function<void(int connection)> serve,
                                                         const std::string& who);
  // Stops accepting and waits for every connection's thread: the owner makes
  // its serve function return first (a flag it checks).
  ~LoopbackListener();

  int port() const { return port_; }

 private:
  LoopbackListener() = default;
  void Accept();

  std::function<void(int)> serve_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  std::mutex mutex_;
  std::vector<std::thread> connections_;
};

}  // namespace ruleplane::testing
