// ruleplane lint PATH...: every problem in the rule files, with file:line:column.
#include <ostream>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/process_profiles.h"
#include "cli/rule_library.h"
#include "engine/verify/conformance.h"

namespace ruleplane::cli {

namespace {
constexpr const char* kLintUsage =
    "usage: ruleplane lint [--] [PATH...]\n\nLoads rule files and reports every problem as file:line:column. "
    "Without a\n"
    "path, every bundled file. Conformance: a rule set that plans an action which no adapter of the\n"
    "process loading it executes (the controller for subject EtcdCluster, member-init for\n"
    "EtcdMemberInit), or reads a snapshot path which that process's observer does not write, is an\n"
    "error naming both. Exit codes: 0 no error, 1 errors, 2 bad usage or an unreadable path.\n";
}  // namespace

int RunLint(const Args& args, std::ostream& out, std::ostream& err) {
  if (HelpRequested(args)) return PrintUsage(kLintUsage, out);
  Flags flags({});
  if (!flags.Parse(args, err, kLintUsage)) return kExitUsage;
  auto library = LoadRuleLibrary(flags.positional(), err);
  if (!library) return kExitUsage;
  int errors = PrintDiagnostics(*library, out);
  for (const RuleFile& file : library->files) {
    if (!file.rule_set) continue;
    auto compiled = CompiledRuleSet::Compile(file.rule_set);
    if (!compiled.ok()) continue;  // its diagnostics said why
    for (const ProcessProfile& profile : ProcessProfiles()) {
      for (const ConformanceFinding& finding : CheckConformance(**compiled, *library->catalogue, profile)) {
        out << FormatDiagnostic({Diagnostic::Severity::kError, finding.position, finding.message}, file.text);
        ++errors;
      }
    }
  }
  out << library->files.size() << (library->files.size() == 1 ? " file" : " files") << " checked, " << errors
      << (errors == 1 ? " error" : " errors") << "\n";
  return errors > 0 ? kExitFinding : kExitOk;
}

}  // namespace ruleplane::cli
