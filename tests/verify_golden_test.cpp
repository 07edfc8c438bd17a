// Golden files for `ruleplane verify`:
//  - tests/golden/verify/<case>.yaml, deliberately broken copies of the
//    shipped tables, against <case>.expected: the report as printed, without
//    the timing;
//  - every shipped rule file (rules/**.yaml) against
//    tests/golden/verify/rules.findings, one line per finding: a new finding
//    in the shipped rules fails the suite until it is resolved or accepted
//    (and documented in the rules' NOTES.md).
// RULEPLANE_UPDATE_GOLDEN=1 rewrites the expected files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/match/compiled_rule_set.h"
#include "engine/rule_file/action_catalogue.h"
#include "engine/rule_file/rule_loader.h"
#include "engine/verify/verifier.h"
#include "tests/support/source_paths.h"

namespace ruleplane {
namespace {

namespace fs = std::filesystem;

using testing::kSourceDir;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

bool UpdateGolden() {
  const char* update = std::getenv("RULEPLANE_UPDATE_GOLDEN");
  return update != nullptr && std::string(update) == "1";
}

std::shared_ptr<const ActionCatalogue> RepoCatalogue() {
  static const std::shared_ptr<const ActionCatalogue> catalogue =
      LoadActionCatalogue(ReadFile(kSourceDir / "actions/catalogue.yaml"), "actions/catalogue.yaml")
          .catalogue;
  return catalogue;
}

// Loads `relative` (to the source tree) and verifies it; an empty report
// titled with the load errors when it does not load.
VerificationReport VerifyFile(const std::string& relative) {
  const std::string text = ReadFile(kSourceDir / relative);
  RuleLoadResult loaded = LoadRuleFile(text, relative, RepoCatalogue().get());
  VerificationReport report;
  if (!loaded.rule_set) {
    report.title = relative + ": does not load";
    for (const Diagnostic& d : loaded.diagnostics) report.title += "\n" + FormatDiagnostic(d, text);
    return report;
  }
  auto compiled = CompiledRuleSet::Compile(loaded.rule_set);
  if (!compiled.ok()) {
    report.title = relative + ": " + compiled.error().message;
    return report;
  }
  return Verify(*compiled, {});
}

void ExpectGolden(const fs::path& expected_path, const std::string& actual) {
  if (UpdateGolden()) {
    std::ofstream(expected_path, std::ios::binary) << actual;
    return;
  }
  ASSERT_TRUE(fs::exists(expected_path))
      << "missing " << expected_path << "; run with RULEPLANE_UPDATE_GOLDEN=1";
  EXPECT_EQ(actual, ReadFile(expected_path)) << "run with RULEPLANE_UPDATE_GOLDEN=1 to accept the new output";
}

std::vector<std::string> GoldenCases() {
  std::vector<std::string> cases;
  const fs::path dir = kSourceDir / "tests/golden/verify";
  if (!fs::is_directory(dir)) return cases;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".yaml") cases.push_back(entry.path().stem().string());
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

class VerifyGoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(VerifyGoldenTest, MatchesExpected) {
  const VerificationReport report = VerifyFile("tests/golden/verify/" + GetParam() + ".yaml");
  EXPECT_GT(report.Count(Diagnostic::Severity::kError), 0) << "a broken copy must have an error finding";
  ExpectGolden(kSourceDir / "tests/golden/verify" / (GetParam() + ".expected"),
               FormatVerificationReport(report, 3));
}

INSTANTIATE_TEST_SUITE_P(Verify, VerifyGoldenTest, ::testing::ValuesIn(GoldenCases()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(VerifyShippedRulesTest, FindingsAreTheAcceptedOnes) {
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(kSourceDir / "rules")) {
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") {
      files.push_back(fs::relative(entry.path(), kSourceDir).string());
    }
  }
  std::sort(files.begin(), files.end());
  std::string findings;
  for (const std::string& file : files) {
    const VerificationReport report = VerifyFile(file);
    if (report.findings.empty() && report.names.empty() && report.states == 0) {
      findings += report.title + "\n";
      continue;
    }
    if (report.findings.empty()) findings += file + ": no findings\n";
    for (const Finding& finding : report.findings) {
      findings += file + ": " + (finding.severity == Diagnostic::Severity::kError ? "error: " : "warning: ") +
                  finding.message + "\n";
    }
  }
  ExpectGolden(kSourceDir / "tests/golden/verify/rules.findings", findings);
}

}  // namespace
}  // namespace ruleplane
