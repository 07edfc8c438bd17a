// Every test and benchmark process that links tests/support takes its
// loopback ports from here, installed before main (this file is linked as an
// object, never dropped from an archive). A port comes from below the
// kernel's ephemeral range, from which every outgoing connection draws its
// local port, so no connection takes it between its choice and its bind; and
// it is reserved among the test processes running at once by an flock on
// <tmp>/ruleplane-test-ports/<port>, held until the process exits, so no
// other test picks it either, however long it stays unbound (a member whose
// etcd starts only after member-init wrote its configuration). The lock files
// stay, one per port at most: removing one would race with a process locking it.
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <string>

#include "platform/process.h"

namespace ruleplane::testing {
namespace {

constexpr int kLowestPort = 10000;

// The first port of the kernel's ephemeral range (32768 unless configured).
int EphemeralRangeStart() {
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 32768;
  range >> low;
  return low;
}

bool BindsOnLoopback(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  const bool bound = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  close(fd);
  return bound;
}

int ReservedLoopbackPort() {
  static std::mutex mutex;
  static std::set<int> reserved;  // by this process, each lock's descriptor left open
  static std::mt19937 random(std::random_device{}() ^ static_cast<unsigned>(getpid()));
  std::lock_guard<std::mutex> lock(mutex);
  const int end = EphemeralRangeStart();
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "ruleplane-test-ports";
  std::error_code ignored;
  std::filesystem::create_directories(dir, ignored);
  std::filesystem::permissions(dir, std::filesystem::perms::all, ignored);
  std::uniform_int_distribution<int> pick(kLowestPort, end - 1);
  for (int attempt = 0; end > kLowestPort + 1000 && attempt < 1000; ++attempt) {
    const int port = pick(random);
    if (reserved.count(port) > 0) continue;
    const int fd = open((dir / std::to_string(port)).c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0666);
    if (fd < 0) continue;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0 || !BindsOnLoopback(port)) {
      close(fd);
      continue;
    }
    reserved.insert(port);
    return port;
  }
  return KernelChosenLoopbackPort();
}

[[maybe_unused]] const bool installed = (SetLoopbackPortPicker(ReservedLoopbackPort), true);

}  // namespace
}  // namespace ruleplane::testing
