// Writing a file atomically when several writers share a directory: each
// writer's temporary file is its own (mkostemp), so two threads of one
// process (one PID) or two containers that are both PID 1 never write into
// one temporary file. Before, the temporary name was "<name>.tmp.<pid>": two
// writers of one file in one process wrote into the same temporary file and
// one rename found it gone or renamed the other's half-written content.
#include "adapters/local/atomic_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "tests/support/temp_dir.h"

namespace ruleplane::testing {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(AtomicFile, TwoWritersOfOneFileInOneProcessEachLeaveAWholeFileAndNoTemporary) {
  TempDir dir("atomic-file");
  const std::string target = dir.path() + "/state.json";
  const std::vector<std::string> contents = {std::string(1 << 20, 'a'), std::string(1 << 20, 'b')};
  std::vector<std::string> failures(2);
  for (int round = 0; round < 50; ++round) {
    std::vector<std::thread> writers;
    for (int writer = 0; writer < 2; ++writer) {
      writers.emplace_back([&, writer] {
        RequestLog log;
        const Status written = WriteFileAtomically(target, contents[writer], log);
        if (!written.ok()) failures[writer] = written.error().message;
      });
    }
    for (std::thread& writer : writers) writer.join();
    ASSERT_EQ(failures, std::vector<std::string>(2)) << "round " << round;
    const std::string now = Slurp(target);
    ASSERT_TRUE(now == contents[0] || now == contents[1])
        << "round " << round << ": a mix of both writers (" << now.size() << " bytes)";
  }
  std::set<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir.path())) left.insert(entry.path().filename().string());
  EXPECT_EQ(left, std::set<std::string>{"state.json"}) << "a temporary file was left behind";
}

TEST(AtomicFile, ScratchFilesAreUniqueAndNamedAsNoSnapshotIs) {
  TempDir dir("scratch-file");
  auto first = CreateScratchFile(dir.path(), "upload");
  auto second = CreateScratchFile(dir.path(), "upload");
  ASSERT_TRUE(first.ok()) << first.error().message;
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_NE(*first, *second);
  EXPECT_TRUE(fs::path(*first).filename().string().starts_with(".upload.")) << *first;
  EXPECT_TRUE(fs::is_regular_file(*first));
  auto nowhere = CreateScratchFile(dir.path() + "/missing", "upload");
  ASSERT_FALSE(nowhere.ok());
  EXPECT_NE(nowhere.error().message.find("cannot create"), std::string::npos) << nowhere.error().message;
}

}  // namespace
}  // namespace ruleplane::testing
