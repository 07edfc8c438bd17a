// The process helpers the etcd tests and the local adapter run programs with.
#include "adapters/process.h"

#include <gtest/gtest.h>

#include <fstream>
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
