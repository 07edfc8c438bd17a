#include "platform/process.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <thread>

namespace ruleplane {
namespace {

std::vector<char*> ArgvPointers(const std::vector<std::string>& argv) {
  std::vector<char*> pointers;
  for (const std::string& arg : argv) pointers.push_back(const_cast<char*>(arg.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

std::string Joined(const std::vector<std::string>& argv) {
  std::string text;
  for (const std::string& arg : argv) text += (text.empty() ? "" : " ") + arg;
  return text;
}

// The inherited environment with `overrides` ("NAME=value") replacing or
// adding entries; built before fork, as the child may only exec.
std::vector<std::string> EnvironmentWith(const std::vector<std::string>& overrides) {
  std::vector<std::string> entries;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const std::string name_and_equals(text.substr(0, text.find('=') + 1));
    const bool overridden =
        std::any_of(overrides.begin(), overrides.end(),
                    [&](const std::string& replacement) { return replacement.starts_with(name_and_equals); });
    if (!overridden) entries.emplace_back(text);
  }
  entries.insert(entries.end(), overrides.begin(), overrides.end());
  return entries;
}

}  // namespace

Result<CommandResult> RunCommand(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  if (argv.empty()) return Error{ErrorCode::kInvalidArgument, "empty command", {}};
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0)
    return Error{ErrorCode::kIo, std::string("pipe: ") + strerror(errno), {}};
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return Error{ErrorCode::kIo, std::string("pipe: ") + strerror(errno), {}};
  }
  std::vector<char*> pointers = ArgvPointers(argv);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    // Dies with us: a member-init killed while etcdctl restores must not
    // leave it writing into a directory the rerun moves or restores again.
    // The calling thread waits for the child, so it cannot end first.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // we died before prctl took effect
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    execvp(pointers[0], pointers.data());
    dprintf(STDERR_FILENO, "cannot run %s: %s\n", pointers[0], strerror(errno));
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (pid < 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    return Error{ErrorCode::kIo, std::string("fork: ") + strerror(errno), {}};
  }
  CommandResult result;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  bool timed_out = false;
  while (open_fds > 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    if (poll(fds, 2, static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      char buffer[65536];
      const ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (pollfd& fd : fds)
    if (fd.fd >= 0) close(fd.fd);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return Error{ErrorCode::kDeadlineExceeded,
                 "'" + Joined(argv) + "' did not finish within " + std::to_string(timeout.count()) + " ms",
                 {}};
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (result.exit_code == 127 && result.err.starts_with("cannot run ")) {
    return Error{ErrorCode::kIo, result.err.substr(0, result.err.find('\n')), {}};
  }
  return result;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept : pid_(other.pid_), status_(other.status_) {
  other.pid_ = -1;
}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    Stop();
    pid_ = other.pid_;
    status_ = other.status_;
    other.pid_ = -1;
  }
  return *this;
}

ChildProcess::~ChildProcess() { Stop(); }

Result<ChildProcess> ChildProcess::Start(const std::vector<std::string>& argv, const std::string& log_path,
                                         const std::vector<std::string>& environment) {
  if (argv.empty()) return Error{ErrorCode::kInvalidArgument, "empty command", {}};
  const int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return Error{ErrorCode::kIo, "cannot open " + log_path + ": " + strerror(errno), {}};
  std::vector<char*> pointers = ArgvPointers(argv);
  const std::vector<std::string> environment_entries = EnvironmentWith(environment);
  std::vector<char*> environment_pointers = ArgvPointers(environment_entries);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    // A long-running child dies with us: a process killed at a failure point
    // must not leave an etcd running on a data directory the rerun moves.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    execvpe(pointers[0], pointers.data(), environment_pointers.data());
    dprintf(STDERR_FILENO, "cannot run %s: %s\n", pointers[0], strerror(errno));
    _exit(127);
  }
  close(log_fd);
  if (pid < 0) return Error{ErrorCode::kIo, std::string("fork: ") + strerror(errno), {}};
  ChildProcess child;
  child.pid_ = pid;
  return child;
}

bool ChildProcess::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  const pid_t done = waitpid(pid_, &status, WNOHANG);
  if (done == pid_) {
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    pid_ = -1;
    return false;
  }
  return true;
}

void ChildProcess::Kill(int signal) {
  if (pid_ > 0) kill(pid_, signal);
}

int ChildProcess::Stop(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return status_;
  kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
    status_ = -1;
    pid_ = -1;
  }
  return status_;
}

namespace {

// Function-local statics: a picker may be installed by another file's static
// initializer (the tests'), which may run before this file's.
std::mutex& PortPickerMutex() {
  static std::mutex mutex;
  return mutex;
}
std::function<int()>& PortPicker() {
  static std::function<int()> picker;  // empty: the kernel's choice
  return picker;
}

}  // namespace

int KernelChosenLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  close(fd);
  return port;
}

int FreeLoopbackPort() {
  std::function<int()> picker;
  {
    std::lock_guard<std::mutex> lock(PortPickerMutex());
    picker = PortPicker();
  }
  return picker ? picker() : KernelChosenLoopbackPort();
}

std::function<int()> SetLoopbackPortPicker(std::function<int()> picker) {
  std::lock_guard<std::mutex> lock(PortPickerMutex());
  std::swap(PortPicker(), picker);
  return picker;
}

bool LogSaysAddressInUse(const std::string& log_path, std::uintmax_t from) {
  std::ifstream in(log_path, std::ios::binary);
  if (!in) return false;
  in.seekg(static_cast<std::streamoff>(from));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Go says "bind: address already in use", strerror "Address already in use".
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text.find("address already in use") != std::string::npos;
}

std::uintmax_t LogSize(const std::string& path) {
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  return error ? 0 : size;
}

}  // namespace ruleplane
