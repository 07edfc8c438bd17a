// Running the ruleplane binary from tests, as a user runs it: arguments in,
// exit code and output out. Temporary files are named after the running test
// and its process, because ctest runs tests in parallel, and the full run runs
// the same test of the release and the sanitizer builds side by side.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/source_paths.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing_support {

struct CommandResult {
  int exit_code;
  std::string out;
  std::string err;
};

using ruleplane::testing::Contains;
using ruleplane::testing::Slurp;

// A temporary file name of the running test's own (in this process: the
// other build's run of the same test may write its own at the same time).
inline std::string TempPath(const std::string& name) {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  return ::testing::TempDir() + "/" + test->test_suite_name() + "_" + test->name() + "_" +
         std::to_string(getpid()) + "_" + name;
}

inline std::string WriteTemp(const std::string& name, const std::string& content) {
  const std::string path = TempPath(name);
  std::ofstream(path) << content;
  return path;
}

// Runs `ruleplane <args>` from the source tree (shell syntax allowed in args).
inline CommandResult Ruleplane(const std::string& args, const std::string& stdin_file = "/dev/null") {
  const std::string out = TempPath("out"), err = TempPath("err");
  const std::string command = std::string("cd ") + ruleplane::testing::SourceDir() + " && " +
                              ruleplane::testing::RuleplaneBinary() + " " + args + " <" + stdin_file + " >" +
                              out + " 2>" + err;
  const int status = std::system(command.c_str());
  CommandResult result{WIFEXITED(status) ? WEXITSTATUS(status) : -1, Slurp(out), Slurp(err)};
  std::remove(out.c_str());
  std::remove(err.c_str());
  return result;
}

}  // namespace ruleplane::testing_support
