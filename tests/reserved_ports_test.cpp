// The tests' port picker (tests/support/reserved_ports.cpp), installed in
// every test process before main.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "platform/process.h"

namespace ruleplane {
namespace {

int EphemeralRangeStart() {
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 32768;
  range >> low;
  return low;
}

TEST(ReservedPorts, APortIsBelowTheEphemeralRangeAndLockedAgainstOtherProcesses) {
  const int port = FreeLoopbackPort();
  EXPECT_GE(port, 10000);
  EXPECT_LT(port, EphemeralRangeStart()) << "an outgoing connection could take it";
  const std::filesystem::path lock =
      std::filesystem::temp_directory_path() / "ruleplane-test-ports" / std::to_string(port);
  const int fd = open(lock.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0) << lock;
  EXPECT_NE(flock(fd, LOCK_EX | LOCK_NB), 0) << "another process could reserve it too";
  close(fd);
}

// A port another live process reserved is never picked, bound or not. Without the
// reservation, 300 random picks each from the ~22,000 ports below the
// ephemeral range would share one with a chance of about 98%.
TEST(ReservedPorts, APortAnotherLiveProcessReservedIsNeverPicked) {
  constexpr int kPicks = 300;
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(pipe_fds[0]);
    for (int i = 0; i < kPicks; ++i) {
      const int port = FreeLoopbackPort();
      if (write(pipe_fds[1], &port, sizeof port) != sizeof port) _exit(1);
    }
    pause();  // holds its reservations until the parent has picked
    _exit(0);
  }
  close(pipe_fds[1]);
  std::set<int> theirs;
  for (int i = 0; i < kPicks; ++i) {
    int port = 0;
    ASSERT_EQ(read(pipe_fds[0], &port, sizeof port), static_cast<ssize_t>(sizeof port));
    theirs.insert(port);
  }
  close(pipe_fds[0]);
  std::set<int> ours;
  for (int i = 0; i < kPicks; ++i) ours.insert(FreeLoopbackPort());
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_EQ(theirs.size(), static_cast<size_t>(kPicks));
  EXPECT_EQ(ours.size(), static_cast<size_t>(kPicks));
  for (int port : ours) EXPECT_EQ(theirs.count(port), 0u) << "both picked " << port;
}

}  // namespace
}  // namespace ruleplane
