// RULEPLANE_FAILPOINT in a child process: a named point exits with 75, a
// point named with "=hang" stops there until the process is killed, a point
// not named (or only a prefix of one) returns.
#include "platform/failure_point.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace ruleplane {
namespace {

struct Child {
  pid_t pid = -1;
  int stderr_fd = -1;  // the read end of the child's standard error
};

// A child with RULEPLANE_FAILPOINT=`configured` that reaches `point`, then
// writes "returned" and exits 0. It handles SIGUSR1 (doing nothing), as the
// controller handles SIGTERM.
Child ReachIn(const std::string& configured, const std::string& point) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], STDERR_FILENO);
    setenv("RULEPLANE_FAILPOINT", configured.c_str(), 1);
    signal(SIGUSR1, [](int) {});
    FailPoint(point);
    (void)!write(STDERR_FILENO, "returned\n", 9);
    _exit(0);
  }
  close(pipe_fds[1]);
  return {pid, pipe_fds[0]};
}

std::string FirstLine(int fd) {
  std::string line;
  char c;
  while (read(fd, &c, 1) == 1 && c != '\n') line += c;
  return line;
}

std::string Rest(int fd) {
  std::string rest;
  char buffer[256];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) rest.append(buffer, static_cast<size_t>(n));
  return rest;
}

int WaitStatus(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

TEST(FailPoint, ANamedPointExitsWith75AndOneNotNamedReturns) {
  Child exits = ReachIn("before:X,after:AddMember", "after:AddMember");
  EXPECT_EQ(FirstLine(exits.stderr_fd), "ruleplane: failure point after:AddMember reached, exiting");
  const int status = WaitStatus(exits.pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), kFailPointExitCode);
  close(exits.stderr_fd);

  for (const char* other : {"after:Add", "after:AddMemberX", "after:AddMember=hangs"}) {
    Child returns = ReachIn(other, "after:AddMember");
    EXPECT_EQ(Rest(returns.stderr_fd), "returned\n") << other;
    const int returned = WaitStatus(returns.pid);
    EXPECT_TRUE(WIFEXITED(returned) && WEXITSTATUS(returned) == 0) << other;
    close(returns.stderr_fd);
  }
}

TEST(FailPoint, APointNamedWithHangStopsThereUntilTheProcessIsKilled) {
  Child hangs = ReachIn("after:ApplyEtcdServices=hang", "after:ApplyEtcdServices");
  EXPECT_EQ(FirstLine(hangs.stderr_fd), "ruleplane: failure point after:ApplyEtcdServices reached, hanging");
  // A signal it handles does not end the hang; only the kill does: it never returned.
  kill(hangs.pid, SIGUSR1);
  kill(hangs.pid, SIGKILL);
  const int status = WaitStatus(hangs.pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  EXPECT_EQ(Rest(hangs.stderr_fd), "");
  close(hangs.stderr_fd);
}

}  // namespace
}  // namespace ruleplane
