// ruleplane diff OLD NEW: the states (and snapshots) two versions of a rule
// set decide differently.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <ostream>

#include "cli/commands.h"
#include "cli/param_option.h"
#include "cli/read_file.h"
#include "cli/rule_library.h"
#include "engine/plan.h"
#include "engine/rule_set_diff.h"
#include "engine/snapshot.h"

namespace ruleplane::cli {
namespace {

constexpr const char* kDiffUsage =
    R"(usage: ruleplane diff [--rules PATH]... [--param NAME=VALUE]... [--snapshots DIR] [--max-regions N] OLD NEW

OLD and NEW are rule files, or NAME@VERSION (a rule-set name and a version
prefix, among the bundled rule files or those under --rules). Both are
evaluated on every combination of fact values their domains allow (a fact
both enumerate takes the values both allow) and the regions of states they
decide differently are listed, each with both decisions and an example state.
With --snapshots DIR, every *.json snapshot in DIR is also planned with both,
and those whose plans differ are listed with both plans. Two versions with
different facts span the product of both domains: the comparison stops after
--max-evaluations partial assignments (default 2000000) and says so.

Exit codes: 0 no difference, 1 differences, 2 bad usage or unreadable input.
)";

struct LoadedSide {
  std::unique_ptr<RuleLibrary> library;
  std::shared_ptr<const CompiledRuleSet> compiled;
};

// The one rule file `reference` names.
std::optional<LoadedSide> LoadSide(const std::string& reference, const std::vector<std::string>& rules_paths,
                                   std::ostream& err) {
  std::vector<std::string> references =
      reference.find('@') != std::string::npos ? rules_paths : std::vector<std::string>{};
  references.push_back(reference);
  LoadedSide side;
  side.library = LoadRuleLibrary(references, err);
  if (!side.library) return std::nullopt;
  if (PrintDiagnostics(*side.library, err) > 0) return std::nullopt;
  if (side.library->files.size() != 1 || !side.library->files[0].rule_set) {
    err << "ruleplane: '" << reference << "' names " << side.library->files.size()
        << " rule files; name exactly one (a file, or NAME@VERSION)\n";
    return std::nullopt;
  }
  auto compiled = CompiledRuleSet::Compile(side.library->files[0].rule_set);
  if (!compiled.ok()) {
    err << side.library->files[0].path << ": error: " << compiled.error().message << "\n";
    return std::nullopt;
  }
  side.compiled = *compiled;
  return side;
}

// The plan's outcome, one line per step (or the error / violation).
std::vector<std::string> PlanLines(const Result<Plan>& plan) {
  if (!plan.ok()) return {"error: " + plan.error().message};
  std::vector<std::string> lines;
  for (const PlannedRuleSet& rule_set : plan->rule_sets) {
    if (rule_set.violation) lines.push_back("violation: " + rule_set.violation->message);
  }
  for (const PlanStep& step : plan->steps) {
    lines.push_back(step.rule + ": " + step.action + "(" + step.target + ") " + step.params.DebugString());
  }
  if (lines.empty()) lines.push_back("no steps");
  return lines;
}

// Plans every snapshot of `dir` with both sides; returns how many differ.
int DiffSnapshots(const std::string& dir, const LoadedSide& old_side, const LoadedSide& new_side,
                  const ParamOverrides& overrides, std::ostream& out, std::ostream& err, bool& failed) {
  namespace fs = std::filesystem;
  std::vector<fs::path> paths;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file() && it->path().extension() == ".json") paths.push_back(it->path());
  }
  if (ec) {
    err << "ruleplane: cannot list '" << dir << "': " << ec.message() << "\n";
    failed = true;
    return 0;
  }
  std::sort(paths.begin(), paths.end());
  EvaluationOptions options;
  options.param_overrides = overrides;
  int planned = 0, differing = 0;
  std::string report;
  for (const fs::path& path : paths) {
    auto text = ReadFile(path.string());
    if (!text.ok()) continue;
    auto snapshot = ParseSnapshot(*text);
    if (!snapshot.ok() || snapshot->subject() != old_side.compiled->rule_set().subject) continue;
    ++planned;
    const std::vector<std::string> before =
        PlanLines(MakePlan({old_side.compiled}, *snapshot, options, old_side.library->catalogue.get()));
    const std::vector<std::string> after =
        PlanLines(MakePlan({new_side.compiled}, *snapshot, options, new_side.library->catalogue.get()));
    if (before == after) continue;
    ++differing;
    report += "  " + path.string() + "\n";
    for (const std::string& line : before) report += "    old: " + line + "\n";
    for (const std::string& line : after) report += "    new: " + line + "\n";
  }
  out << "snapshots in " << dir << ": " << differing << " of " << planned << " planned differently\n"
      << report;
  return differing;
}

}  // namespace

// A non-negative number option; false after a usage error.
bool ParseCount(const std::string& option, const std::string& value, int64_t& count, std::ostream& err) {
  if (value.empty() || value.size() > 18 || value.find_first_not_of("0123456789") != std::string::npos) {
    err << "ruleplane: " << option << " expects a number, got '" << value << "'\n";
    return false;
  }
  count = std::stoll(value);
  return true;
}

int RunDiff(const Args& args, std::ostream& out, std::ostream& err) {
  std::vector<std::string> sides, rules_paths;
  std::string snapshots_dir;
  ParamOverrides overrides;
  int64_t max_regions = 3, max_evaluations = 2000000;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      out << kDiffUsage;
      return kExitOk;
    }
    const bool takes_value = arg == "--param" || arg == "--rules" || arg == "--snapshots" ||
                             arg == "--max-regions" || arg == "--max-evaluations";
    if (takes_value && i + 1 < args.size()) {
      const std::string& value = args[++i];
      if (arg == "--param" && !ParseParamOption(value, overrides, err)) return kExitUsage;
      if (arg == "--rules") rules_paths.push_back(value);
      if (arg == "--snapshots") snapshots_dir = value;
      if (arg == "--max-regions" && !ParseCount(arg, value, max_regions, err)) return kExitUsage;
      if (arg == "--max-evaluations" && !ParseCount(arg, value, max_evaluations, err)) return kExitUsage;
      continue;
    }
    if (arg.starts_with("-")) {
      err << kDiffUsage;
      return kExitUsage;
    }
    sides.push_back(arg);
  }
  if (sides.size() != 2) {
    err << kDiffUsage;
    return kExitUsage;
  }
  auto old_side = LoadSide(sides[0], rules_paths, err);
  if (!old_side) return kExitUsage;
  auto new_side = LoadSide(sides[1], rules_paths, err);
  if (!new_side) return kExitUsage;
  RuleLibrary both;
  for (const LoadedSide* side : {&*old_side, &*new_side}) both.files.push_back(side->library->files[0]);
  if (!OverridesAreDeclared(both, overrides, err)) return kExitUsage;

  const auto start = std::chrono::steady_clock::now();
  const VerificationReport report =
      DiffRuleSets(old_side->compiled, new_side->compiled, overrides, static_cast<uint64_t>(max_evaluations));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  char took[32];
  std::snprintf(took, sizeof took, "%.2f", seconds);
  out << FormatVerificationReport(report, static_cast<int>(max_regions)) << "  took " << took << " s\n";
  bool failed = false;
  int differences = 0;
  for (const Finding& finding : report.findings) {
    failed = failed || (finding.kind == Finding::Kind::kUnverifiable &&
                        finding.severity == Diagnostic::Severity::kError);
    differences += finding.kind == Finding::Kind::kChanged ? 1 : 0;
  }
  if (!snapshots_dir.empty()) {
    differences += DiffSnapshots(snapshots_dir, *old_side, *new_side, overrides, out, err, failed);
  }
  if (failed) return kExitUsage;
  return differences > 0 ? kExitFinding : kExitOk;
}

}  // namespace ruleplane::cli
