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

OLD and NEW are rule files, or NAME@VERSION references (a rule-set name and a
version prefix, among the bundled rule files or those under --rules), each of
which may select several rule sets: `diff etcd-druid@1 etcd-druid@2` compares
the two selections. Rule sets of the same name are paired, and each pair is
evaluated on every combination of fact values their domains allow (a fact
both enumerate takes the values both allow): the regions of states they
decide differently are listed, each with both decisions and an example state.
Rule sets found on one side only are named.
With --snapshots DIR, every *.json snapshot in DIR is also planned with the
whole of each side, and those whose plans differ are listed with both plans.
Two versions with different facts span the product of both domains: the
comparison stops after --max-evaluations partial assignments (default
2000000) and says so.

Exit codes: 0 no difference, 1 differences, 2 bad usage or unreadable input.
)";

struct LoadedSide {
  std::unique_ptr<RuleLibrary> library;
  // The newest version of each rule-set name the reference selects, in name order.
  std::vector<std::shared_ptr<const CompiledRuleSet>> compiled;
};

// The rule files `reference` names.
std::optional<LoadedSide> LoadSide(const std::string& reference, const std::vector<std::string>& rules_paths,
                                   std::ostream& err) {
  std::vector<std::string> references =
      reference.find('@') != std::string::npos ? rules_paths : std::vector<std::string>{};
  references.push_back(reference);
  LoadedSide side;
  side.library = LoadRuleLibrary(references, err);
  if (!side.library) return std::nullopt;
  if (PrintDiagnostics(*side.library, err) > 0) return std::nullopt;
  if (side.library->files.empty()) {
    err << "ruleplane: '" << reference << "' names no rule file\n";
    return std::nullopt;
  }
  side.compiled = SelectForSubject(*side.library, "", err);
  if (side.compiled.empty()) return std::nullopt;
  return side;
}

const CompiledRuleSet* FindByName(const LoadedSide& side, const std::string& name) {
  for (const auto& compiled : side.compiled) {
    if (compiled->rule_set().name == name) return compiled.get();
  }
  return nullptr;
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
    if (!snapshot.ok()) continue;
    auto plan_with = [&](const LoadedSide& side) {
      std::vector<std::shared_ptr<const CompiledRuleSet>> selected;
      for (const auto& compiled : side.compiled) {
        if (compiled->rule_set().subject == snapshot->subject()) selected.push_back(compiled);
      }
      return selected;
    };
    const auto old_rule_sets = plan_with(old_side), new_rule_sets = plan_with(new_side);
    if (old_rule_sets.empty() && new_rule_sets.empty()) continue;
    ++planned;
    const std::vector<std::string> before =
        PlanLines(MakePlan(old_rule_sets, *snapshot, options, old_side.library->catalogue.get()));
    const std::vector<std::string> after =
        PlanLines(MakePlan(new_rule_sets, *snapshot, options, new_side.library->catalogue.get()));
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
  for (const LoadedSide* side : {&*old_side, &*new_side}) {
    both.files.insert(both.files.end(), side->library->files.begin(), side->library->files.end());
  }
  if (!OverridesAreDeclared(both, overrides, err)) return kExitUsage;

  bool failed = false;
  int differences = 0;
  auto describe = [](const CompiledRuleSet& compiled) {
    return compiled.rule_set().id() + " (" + compiled.rule_set().file + ")";
  };
  for (const auto& old_rules : old_side->compiled) {
    if (FindByName(*new_side, old_rules->rule_set().name) == nullptr) {
      out << "only in " << sides[0] << ": " << describe(*old_rules) << "\n";
      ++differences;
    }
  }
  for (const auto& new_rules : new_side->compiled) {
    if (FindByName(*old_side, new_rules->rule_set().name) == nullptr) {
      out << "only in " << sides[1] << ": " << describe(*new_rules) << "\n";
      ++differences;
    }
  }
  for (const auto& old_rules : old_side->compiled) {
    std::shared_ptr<const CompiledRuleSet> new_rules;
    for (const auto& candidate : new_side->compiled) {
      if (candidate->rule_set().name == old_rules->rule_set().name) new_rules = candidate;
    }
    if (!new_rules) continue;
    const auto start = std::chrono::steady_clock::now();
    const VerificationReport report =
        DiffRuleSets(old_rules, new_rules, overrides, static_cast<uint64_t>(max_evaluations));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    char took[32];
    std::snprintf(took, sizeof took, "%.2f", seconds);
    out << FormatVerificationReport(report, static_cast<int>(max_regions)) << "  took " << took << " s\n";
    for (const Finding& finding : report.findings) {
      failed = failed || (finding.kind == Finding::Kind::kUnverifiable &&
                          finding.severity == Diagnostic::Severity::kError);
      differences += finding.kind == Finding::Kind::kChanged ? 1 : 0;
    }
  }
  if (!snapshots_dir.empty()) {
    differences += DiffSnapshots(snapshots_dir, *old_side, *new_side, overrides, out, err, failed);
  }
  if (failed) return kExitUsage;
  return differences > 0 ? kExitFinding : kExitOk;
}

}  // namespace ruleplane::cli
