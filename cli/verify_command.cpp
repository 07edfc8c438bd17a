// ruleplane verify PATH...: every state of each rule file's declared domains,
// checked for gaps, conflicts, dead and masked rules and invariant failures.
#include <chrono>
#include <cstdio>
#include <ostream>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/param_option.h"
#include "cli/rule_library.h"
#include "engine/verify/verifier.h"

namespace ruleplane::cli {
namespace {

constexpr const char* kVerifyUsage =
    R"(usage: ruleplane verify [--param NAME=VALUE]... [--max-regions N] [PATH|NAME@VERSION]...

Enumerates every combination of fact values the rule files' domains allow and
their constraints accept (the bundled rule files without a PATH) and reports,
each with the regions of states it holds and an example state per region:
  gaps               states no rule decides (warnings with spec.allowGaps: true)
  conflicts          UNIQUE: several rules match; ANY: rules with different actions
  overlaps           COLLECT: rules with different actions match together (warnings)
  invariant failures states where an invariant is false
  dead rules         rules that match no state
  masked rules       rules that match but are never selected, and the rules selected instead
  evaluation errors  states where a fact, cell or invariant cannot be evaluated
Params take their defaults unless --param overrides them. --max-regions limits
the regions listed per finding (default 3; 0 lists all).

Exit codes: 0 no error found, 1 an error finding (or a rule file with lint
errors), 2 bad usage or unreadable input.
)";

std::string Seconds(std::chrono::steady_clock::duration elapsed) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", std::chrono::duration<double>(elapsed).count());
  return text;
}

}  // namespace

int RunVerify(const Args& args, std::ostream& out, std::ostream& err) {
  if (HelpRequested(args)) return PrintUsage(kVerifyUsage, out);
  Flags flags({{"--param"}, {"--max-regions"}});
  if (!flags.Parse(args, err, kVerifyUsage)) return kExitUsage;
  ParamOverrides overrides;
  for (const std::string& assignment : flags.GetAll("--param")) {
    if (!ParseParamOption(assignment, overrides, err)) return kExitUsage;
  }
  int64_t max_regions = 3;
  if (!flags.GetCount("--max-regions", max_regions, err)) return kExitUsage;
  auto library = LoadRuleLibrary(flags.positional(), err);
  if (!library) return kExitUsage;
  if (!OverridesAreDeclared(*library, overrides, err)) return kExitUsage;
  bool failed = PrintDiagnostics(*library, err) > 0;
  for (const RuleFile& file : library->files) {
    if (!file.rule_set) continue;
    auto compiled = CompiledRuleSet::Compile(file.rule_set);
    if (!compiled.ok()) {
      err << file.path << ": error: " << compiled.error().message << "\n";
      failed = true;
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    const VerificationReport report = Verify(*compiled, overrides);
    const auto elapsed = std::chrono::steady_clock::now() - start;
    out << FormatVerificationReport(report, static_cast<int>(max_regions)) << "  took " << Seconds(elapsed)
        << " s\n";
    failed = failed || report.Count(Diagnostic::Severity::kError) > 0;
  }
  return failed ? kExitFinding : kExitOk;
}

}  // namespace ruleplane::cli
