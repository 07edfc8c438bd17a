// Running programs: a command to completion (etcdctl), or a long-running
// process (an etcd for replay, a test cluster's members) stopped by its PID.
// No shell is involved: arguments are passed as they are.
#pragma once

#include <sys/types.h>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/common/error.h"

namespace ruleplane {

struct CommandResult {
  int exit_code = -1;  // -1 when killed by a signal or at the timeout
  std::string out;     // stdout
  std::string err;     // stderr
};

// Runs argv[0] (looked up in PATH) with the arguments and waits at most
// `timeout`; a process still running then is killed (kDeadlineExceeded).
// kIo when it cannot be started. A non-zero exit is not an error here. The
// command is killed when this process dies (PR_SET_PDEATHSIG).
Result<CommandResult> RunCommand(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);

// A child process that runs until Stop() or destruction (SIGTERM, then SIGKILL
// after `grace`). Its stdout and stderr go to `log_path` (appended);
// `environment` ("NAME=value" entries) is set on top of the inherited one.
// It is killed when the thread that started it ends (PR_SET_PDEATHSIG).
class ChildProcess {
 public:
  ChildProcess() = default;
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  static Result<ChildProcess> Start(const std::vector<std::string>& argv, const std::string& log_path,
                                    const std::vector<std::string>& environment = {});

  pid_t pid() const { return pid_; }
  bool running();  // reaps the child when it has exited
  void Kill(int signal);
  // Stops the process and waits for it; its exit status, or -1.
  int Stop(std::chrono::milliseconds grace = std::chrono::seconds(5));

 private:
  pid_t pid_ = -1;
  int status_ = -1;
};

// A TCP port on 127.0.0.1 that was free a moment ago (bound, then closed).
// Another process may take it before the caller's child binds it: etcd 3.4
// and kube-apiserver cannot take an inherited socket, so whoever starts one
// on such ports starts it again on new ones when it could not bind
// (LogSaysAddressInUse, or an early exit).
int FreeLoopbackPort();

// Replaces how FreeLoopbackPort picks a port, for tests that hand out a port
// already taken to prove that the retry works; an empty function restores
// the default, KernelChosenLoopbackPort. Returns the picker it replaces.
std::function<int()> SetLoopbackPortPicker(std::function<int()> picker);
// The kernel's choice of a free loopback port (bound, then closed).
int KernelChosenLoopbackPort();

// Whether what a process wrote to `log_path` from byte `from` on says that
// it could not listen on its address ("address already in use", any case).
bool LogSaysAddressInUse(const std::string& log_path, std::uintmax_t from = 0);

// The size of the file at `path`, 0 when it does not exist: where a process
// started now begins to append to its log.
std::uintmax_t LogSize(const std::string& path);

}  // namespace ruleplane
