// The process helpers the etcd tests and the local adapter run programs with.
#include "adapters/process.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace ruleplane
