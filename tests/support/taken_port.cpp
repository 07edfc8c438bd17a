#include "tests/support/taken_port.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "platform/process.h"

namespace ruleplane::testing {

TakenPort::TakenPort(std::set<int> picks) {
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  if (fd_ >= 0 && bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      listen(fd_, 1) == 0 && getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port_ = ntohs(address.sin_port);
  }
  const int port = port_;
  std::shared_ptr<State> state = state_;
  previous_ = SetLoopbackPortPicker(nullptr);
  SetLoopbackPortPicker([state, port, picks = std::move(picks), previous = previous_] {
    if (picks.count(++state->picks) > 0) {
      ++state->handed_out;
      return port;
    }
    // Never the taken port by chance: neither picker hands out a port that is listened on.
    return previous ? previous() : KernelChosenLoopbackPort();
  });
}

TakenPort::~TakenPort() {
  SetLoopbackPortPicker(previous_);
  if (fd_ >= 0) close(fd_);
}

}  // namespace ruleplane::testing
