#include "tests/support/loopback_listener.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ruleplane::testing {

Result<std::unique_ptr<LoopbackListener>> LoopbackListener::Start(std::function<void(int connection)> serve,
                                                                  const std::string& who) {
  std::unique_ptr<LoopbackListener> listener(new LoopbackListener());
  listener->serve_ = std::move(serve);
  listener->listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = 0;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (listener->listener_ < 0 ||
      bind(listener->listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      listen(listener->listener_, 64) != 0) {
    return Error{ErrorCode::kIo, who + " cannot listen: " + std::strerror(errno), {}};
  }
  socklen_t length = sizeof address;
  getsockname(listener->listener_, reinterpret_cast<sockaddr*>(&address), &length);
  listener->port_ = ntohs(address.sin_port);
  listener->acceptor_ = std::thread([raw = listener.get()] { raw->Accept(); });
  return listener;
}

LoopbackListener::~LoopbackListener() {
  stopping_ = true;
  if (acceptor_.joinable()) acceptor_.join();
  if (listener_ >= 0) close(listener_);
  std::lock_guard<std::mutex> lock(mutex_);
  for (std::thread& connection : connections_) connection.join();
}

void LoopbackListener::Accept() {
  while (!stopping_) {
    pollfd ready{listener_, POLLIN, 0};
    if (poll(&ready, 1, 100) <= 0) continue;
    const int connection = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) continue;
    std::lock_guard<std::mutex> lock(mutex_);
    connections_.emplace_back([this, connection] {
      serve_(connection);
      close(connection);
    });
  }
}

}  // namespace ruleplane::testing
