// ruleplane test PATH...: runs the tests written inside rule files; with
// --coverage, reports which rules and cells they exercised.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <ostream>

#include "cli/bundled_files.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/read_file.h"
#include "cli/rule_library.h"
#include "engine/verify/rule_test_runner.h"
#include "engine/verify/test_coverage.h"

namespace ruleplane::cli {
namespace {

// Reads a test's snapshotFile relative to its rule file, from disk or, for a
// bundled rule file, from the bundle.
Result<std::string> ReadRelative(const std::string& rule_file, const std::string& snapshot_file) {
  const std::string path =
      (std::filesystem::path(rule_file).parent_path() / snapshot_file).lexically_normal().string();
  for (const BundledFile& file : BundledFiles()) {
    if (file.path == path && !std::filesystem::exists(rule_file)) return file.content;
  }
  return ReadFile(path);
}

std::string MinimumText(double percent) {
  char text[32];
  std::snprintf(text, sizeof text, "%g%%", percent);
  return text;
}

}  // namespace

int RunTest(const Args& args, std::ostream& out, std::ostream& err) {
  constexpr const char* kUsage = "usage: ruleplane test [--coverage] [--min-coverage PERCENT] [PATH...]\n";
  if (HelpRequested(args)) return PrintUsage(kUsage, out);
  Flags flags({{"--coverage", false}, {"--min-coverage"}});
  if (!flags.Parse(args, err, kUsage)) return kExitUsage;
  const bool show_coverage = flags.Has("--coverage");
  double min_coverage = -1;
  if (flags.Has("--min-coverage")) {
    const std::string text = flags.Get("--min-coverage");
    char* end = nullptr;
    min_coverage = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(min_coverage >= 0 && min_coverage <= 100)) {
      err << "ruleplane: --min-coverage expects a percentage between 0 and 100, got '" << text << "'\n";
      return kExitUsage;
    }
  }
  auto library = LoadRuleLibrary(flags.positional(), err);
  if (!library) return kExitUsage;
  int passed = 0, failed = PrintDiagnostics(*library, err) > 0 ? 1 : 0;
  std::string coverage_report, below_minimum;
  for (const RuleFile& file : library->files) {
    if (!file.rule_set) continue;
    auto compiled = CompiledRuleSet::Compile(file.rule_set);
    if (!compiled.ok()) {
      err << file.path << ": error: " << compiled.error().message << "\n";
      ++failed;
      continue;
    }
    const SnapshotReader reader = [&](const std::string& snapshot_file) {
      return ReadRelative(file.path, snapshot_file);
    };
    TestCoverage coverage(*file.rule_set);
    for (const RuleTest& test : file.rule_set->tests) {
      RuleTestOutcome outcome = RunRuleTest(*compiled, test, library->catalogue.get(), reader, &coverage);
      out << (outcome.passed ? "PASS " : "FAIL ") << file.rule_set->id() << ": " << outcome.name << "\n";
      if (!outcome.passed) {
        out << "     " << test.position.file << ":" << test.position.line << ": " << outcome.failure << "\n";
      }
      (outcome.passed ? passed : failed)++;
    }
    coverage_report += file.path + ": coverage " + coverage.Format();
    if (coverage.Percent() < min_coverage) {
      below_minimum += "ruleplane: " + file.path + ": coverage below " + MinimumText(min_coverage) + "\n";
    }
  }
  if (show_coverage || min_coverage >= 0) out << coverage_report;
  err << below_minimum;
  if (!below_minimum.empty()) ++failed;
  out << passed << " passed, " << failed << " failed\n";
  return failed > 0 ? kExitFinding : kExitOk;
}

}  // namespace ruleplane::cli
