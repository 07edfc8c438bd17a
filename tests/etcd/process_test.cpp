// The process helpers the etcd tests and the local adapter run programs with.
#include "platform/process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "tests/support/temp_dir.h"

namespace ruleplane {
namespace {

TEST(RunCommand, CapturesOutputAndExitCode) {
  auto result = RunCommand({"sh", "-c", "echo out; echo err >&2; exit 3"}, std::chrono::seconds(5));
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->exit_code, 3);
  EXPECT_EQ(result->out, "out\n");
  EXPECT_EQ(result->err, "err\n");
}

TEST(RunCommand, KillsAtTheTimeout) {
  auto result = RunCommand({"sleep", "10"}, std::chrono::milliseconds(200));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kDeadlineExceeded);
}

TEST(RunCommand, MissingProgramIsAnIoError) {
  auto result = RunCommand({"ruleplane-no-such-program"}, std::chrono::seconds(5));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kIo);
}

// /proc/<pid>/stat's state and parent; nullopt when there is no such process.
std::optional<std::pair<char, pid_t>> StateAndParent(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(file, stat)) return std::nullopt;
  std::istringstream rest(stat.substr(stat.rfind(')') + 1));  // after "pid (comm)"
  char state = '?';
  pid_t parent = 0;
  rest >> state >> parent;
  return std::make_pair(state, parent);
}

// Whether the process `pid` runs exactly `argv` (/proc/<pid>/cmdline).
bool Runs(pid_t pid, const std::vector<std::string>& argv) {
  std::string wanted;
  for (const std::string& arg : argv) wanted += arg + '\0';
  std::ifstream file("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::stringstream cmdline;
  cmdline << file.rdbuf();
  return cmdline.str() == wanted;
}

// The processes whose command line is exactly `argv`.
std::vector<pid_t> ProcessesRunning(const std::vector<std::string>& argv) {
  std::vector<pid_t> found;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (Runs(std::stoi(name), argv)) found.push_back(std::stoi(name));
  }
  return found;
}

// A command RunCommand runs dies with the process that runs it: a
// member-init killed during `etcdctl snapshot restore` leaves no etcdctl
// writing behind it. The test forks a parent that runs `sleep`, finds the
// sleep in /proc by its unique argument, SIGKILLs the parent and waits
// (bounded) for the sleep to be gone.
TEST(RunCommand, TheCommandDiesWhenItsParentIsKilled) {
  const std::vector<std::string> argv = {"sleep", "1000." + std::to_string(getpid())};
  const pid_t parent = fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    (void)RunCommand(argv, std::chrono::hours(1));
    _exit(0);
  }
  pid_t command = -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (command < 0 && std::chrono::steady_clock::now() < deadline) {
    for (pid_t pid : ProcessesRunning(argv)) {
      if (auto state = StateAndParent(pid); state && state->second == parent) command = pid;
    }
    if (command < 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(parent, SIGKILL);
  int status = 0;
  waitpid(parent, &status, 0);
  ASSERT_GT(command, 0) << "the parent never ran " << argv[0] << " " << argv[1];

  // Gone, or a zombie waiting for init to reap it: either way it was killed.
  auto alive = [&] {
    auto state = StateAndParent(command);
    return state && state->first != 'Z' && state->first != 'X' && Runs(command, argv);
  };
  const auto gone_by = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (alive() && std::chrono::steady_clock::now() < gone_by)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const bool survived = alive();
  if (survived) kill(command, SIGKILL);
  EXPECT_FALSE(survived) << argv[0] << " (pid " << command << ") outlived its killed parent";
}

TEST(ChildProcess, StopsByPid) {
  auto child = ChildProcess::Start({"sleep", "30"}, "/dev/null");
  ASSERT_TRUE(child.ok());
  EXPECT_TRUE(child->running());
  child->Stop(std::chrono::milliseconds(500));
  EXPECT_FALSE(child->running());
}

TEST(ChildProcess, SetsEnvironmentOnTopOfTheInheritedOneAndAppendsItsLog) {
  testing::TempDir dir("process");
  const std::string log = dir.path() + "/child.log";
  const std::vector<std::string> argv = {"sh", "-c", "echo \"$RULEPLANE_TEST_VALUE $HOME ${PATH:+path}\""};
  for (int run = 0; run < 2; ++run) {
    auto child =
        ChildProcess::Start(argv, log, {"RULEPLANE_TEST_VALUE=run" + std::to_string(run), "HOME=/nowhere"});
    ASSERT_TRUE(child.ok()) << child.error().message;
    for (int wait = 0; wait < 250 && child->running(); ++wait)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(child->Stop(), 0);
  }
  std::stringstream text;
  text << std::ifstream(log).rdbuf();
  EXPECT_EQ(text.str(), "run0 /nowhere path\nrun1 /nowhere path\n");
}

}  // namespace
}  // namespace ruleplane
