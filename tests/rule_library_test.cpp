#include "cli/rule_library.h"

#include <sstream>

#include <gtest/gtest.h>

namespace ruleplane::cli {
namespace {

TEST(CompareVersions, OrdersBySemverNumbersNotText) {
  EXPECT_LT(CompareVersions("1.2.0", "1.10.0"), 0);
  EXPECT_GT(CompareVersions("2.0.0", "1.99.99"), 0);
  EXPECT_EQ(CompareVersions("1.0.0", "1.0.0"), 0);
  EXPECT_LT(CompareVersions("2.0.0-rc.1", "2.0.0"), 0);
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
