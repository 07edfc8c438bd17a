#include "cli/rule_library.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <gtest/gtest.h>

#include "tests/run_ruleplane.h"
#include "tests/support/source_paths.h"

namespace ruleplane::cli {
namespace {

TEST(CompareVersions, OrdersBySemverNumbersNotText) {
  EXPECT_LT(CompareVersions("1.2.0", "1.10.0"), 0);
  EXPECT_GT(CompareVersions("2.0.0", "1.99.99"), 0);
  EXPECT_EQ(CompareVersions("1.0.0", "1.0.0"), 0);
  EXPECT_LT(CompareVersions("2.0.0-rc.1", "2.0.0"), 0);
}

TEST(CompareVersions, PrereleasesInSemverPrecedence) {
  // semver.org, 2.0.0, item 11, and identifiers compared as numbers, not text.
  const char* const ordered[] = {"1.0.0-alpha",  "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta",
                                 "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1",       "1.0.0-rc.9",
                                 "1.0.0-rc.10",  "1.0.0",         "1.0.1-0",          "1.0.1"};
  for (size_t i = 0; i < std::size(ordered); ++i) {
    for (size_t j = 0; j < std::size(ordered); ++j) {
      const int expected = i < j ? -1 : i > j ? 1 : 0;
      EXPECT_EQ(CompareVersions(ordered[i], ordered[j]), expected) << ordered[i] << " vs " << ordered[j];
    }
  }
  EXPECT_EQ(CompareVersions("1.0.0+build.5", "1.0.0+build.6"), 0);
  EXPECT_LT(CompareVersions("1.0.0-rc.1+zzz", "1.0.0-rc.2+aaa"), 0);
}

TEST(RuleLibrary, SameNameAndVersionInTwoFilesIsAnErrorNamingBoth) {
  using testing_support::Slurp;
  const std::string text =
      Slurp(std::string(ruleplane::testing::SourceDir()) + "/fuzz/corpus/rule_loader/valid.yaml");
  const std::string dir = testing_support::TempPath("rules");
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/a.yaml") << text;
  std::ofstream(dir + "/b.yaml") << text;
  std::ostringstream err, diagnostics;
  auto library = LoadRuleLibrary({dir}, err);
  ASSERT_NE(library, nullptr) << err.str();
  EXPECT_EQ(PrintDiagnostics(*library, diagnostics), 1) << diagnostics.str();
  EXPECT_NE(
      diagnostics.str().find(dir + "/b.yaml:6:12: error: rule set valid@1.2.3-rc.1 is also declared by " +
                             dir + "/a.yaml:6"),
      std::string::npos)
      << diagnostics.str();
}

TEST(RuleLibrary, BundledFilesLoadWithoutErrors) {
  std::ostringstream err;
  auto library = LoadRuleLibrary({}, err);
  ASSERT_NE(library, nullptr) << err.str();
  EXPECT_FALSE(library->files.empty());
  std::ostringstream diagnostics;
  EXPECT_EQ(PrintDiagnostics(*library, diagnostics), 0) << diagnostics.str();
}

TEST(RuleLibrary, UnknownNameAtVersionIsAnError) {
  std::ostringstream err;
  EXPECT_EQ(LoadRuleLibrary({"no-such-rules@9"}, err), nullptr);
  EXPECT_NE(err.str().find("no rule file matches 'no-such-rules@9'"), std::string::npos) << err.str();
}

TEST(RuleLibrary, UnreadablePathIsAnError) {
  std::ostringstream err;
  EXPECT_EQ(LoadRuleLibrary({"/nonexistent/rules.yaml"}, err), nullptr);
  EXPECT_NE(err.str().find("cannot read '/nonexistent/rules.yaml'"), std::string::npos) << err.str();
}

}  // namespace
}  // namespace ruleplane::cli
