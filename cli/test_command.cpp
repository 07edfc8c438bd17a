// ruleplane test PATH...: runs the tests written inside rule files.
#include <filesystem>
#include <ostream>

#include "cli/bundled_files.h"
#include "cli/commands.h"
#include "cli/read_file.h"
#include "cli/rule_library.h"
#include "engine/rule_test_runner.h"

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

}  // namespace

int RunTest(const Args& args, std::ostream& out, std::ostream& err) {
  for (const std::string& arg : args) {
    if (arg.starts_with("-")) {
      err << "usage: ruleplane test [PATH...]\n";
      return kExitUsage;
    }
  }
  auto library = LoadRuleLibrary(args, err);
  if (!library) return kExitUsage;
  int passed = 0, failed = PrintDiagnostics(*library, err) > 0 ? 1 : 0;
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
    for (const RuleTest& test : file.rule_set->tests) {
      RuleTestOutcome outcome = RunRuleTest(*compiled, test, library->catalogue.get(), reader);
      out << (outcome.passed ? "PASS " : "FAIL ") << file.rule_set->id() << ": " << outcome.name << "\n";
      if (!outcome.passed) {
        out << "     " << test.position.file << ":" << test.position.line << ": " << outcome.failure << "\n";
      }
      (outcome.passed ? passed : failed)++;
    }
  }
  out << passed << " passed, " << failed << " failed\n";
  return failed > 0 ? kExitFinding : kExitOk;
}

}  // namespace ruleplane::cli
