// ruleplane diff OLD NEW: the states (and snapshots) two versions of a rule
// set decide differently.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/param_option.h"
#include "cli/read_file.h"
#include "cli/rule_library.h"
#include "engine/common/json_value.h"
#include "engine/common/snapshot.h"
#include "engine/plan/plan.h"
#include "engine/verify/plan_difference.h"
#include "engine/verify/rule_set_diff.h"
#include "execution/journal.h"

namespace ruleplane::cli {
namespace {

constexpr const char* kDiffUsage =
    R"(usage: ruleplane diff [--rules PATH]... [--param NAME=VALUE]... [--snapshots WHERE] [--journal FILE]
                      [--max-regions N] OLD NEW

OLD and NEW are rule files, or NAME@VERSION references (a rule-set name and a
version prefix, among the bundled rule files or those under --rules), each of
which may select several rule sets: `diff etcd-druid@1 etcd-druid@2` compares
the two selections. Rule sets of the same name are paired, and each pair is
evaluated on every combination of fact values their domains allow (a fact
both enumerate takes the values both allow): the regions of states they
decide differently are listed, each with both decisions and an example state.
Rule sets found on one side only are named.
With --snapshots WHERE (a directory of *.json snapshots, one .json file, or
JSON lines, `-` for standard input), every snapshot is also planned with the
whole of each side, and those whose plans differ are listed with both plans;
snapshots generated from a grid of observations (a top-level `observation`
object, as examples/observe_cluster.py writes) are summed up as regions of
the grid, grouped by the actions of both plans.
With --journal FILE (a journal member-init or apply wrote), every snapshot the
journal recorded is planned with both sides in the same way: what the other
version would have decided on real observations.
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

std::shared_ptr<const CompiledRuleSet> FindByName(const LoadedSide& side, const std::string& name) {
  for (const auto& compiled : side.compiled) {
    if (compiled->rule_set().name == name) return compiled;
  }
  return nullptr;
}

// The plan's outcome, one line per step (or the error / violation).
std::vector<std::string> PlanLines(const Result<Plan>& plan) {
  if (!plan.ok()) return {"error: " + plan.error().message};
  std::vector<std::string> lines;
  for (const PlannedRuleSet& rule_set : plan->rule_sets) {
    if (rule_set.violation) lines.push_back("violation: " + rule_set.violation->message);
    if (rule_set.error) lines.push_back("error: " + rule_set.error->message);
  }
  for (const PlanStep& step : plan->steps) {
    lines.push_back(step.rule + ": " + step.action + "(" + step.target + ") " + step.params.DebugString());
  }
  if (lines.empty()) lines.push_back("no steps");
  return lines;
}

// The action names of a plan's steps ("violation" / "error" when it has none to give).
std::vector<std::string> PlanActions(const Result<Plan>& plan) {
  if (!plan.ok()) return {"error"};
  std::vector<std::string> actions;
  for (const PlannedRuleSet& rule_set : plan->rule_sets) {
    if (rule_set.violation) actions.push_back("violation");
    if (rule_set.error) actions.push_back("error");
  }
  for (const PlanStep& step : plan->steps) actions.push_back(step.action);
  return actions;
}

struct SnapshotText {
  std::string source;  // "path", or "path:line" for JSON lines
  std::string text;
};

// The snapshots of `where`: every *.json file of a directory, one .json file,
// or JSON lines (a file of another name, or "-" for standard input).
std::optional<std::vector<SnapshotText>> ReadSnapshots(const std::string& where, std::ostream& err) {
  namespace fs = std::filesystem;
  std::vector<SnapshotText> snapshots;
  std::error_code ec;
  if (where != "-" && fs::is_directory(where, ec)) {
    auto paths = ListFiles(where, {".json"}, false);
    if (!paths.ok()) {
      err << "ruleplane: " << paths.error().message << "\n";
      return std::nullopt;
    }
    for (const std::string& path : *paths) {
      auto text = ReadFile(path);
      if (!text.ok()) {
        err << "ruleplane: " << text.error().message << "\n";
        return std::nullopt;
      }
      snapshots.push_back({path, std::move(*text)});
    }
    return snapshots;
  }
  auto text = ReadFile(where);
  if (!text.ok()) {
    err << "ruleplane: " << text.error().message << "\n";
    return std::nullopt;
  }
  if (fs::path(where).extension() == ".json") return std::vector<SnapshotText>{{where, std::move(*text)}};
  size_t line = 0, start = 0;
  while (start < text->size()) {
    size_t end = text->find('\n', start);
    if (end == std::string::npos) end = text->size();
    ++line;
    if (text->find_first_not_of(" \t\r", start) < end)
      snapshots.push_back({where + ":" + std::to_string(line), text->substr(start, end - start)});
    start = end + 1;
  }
  return snapshots;
}

std::string Snapshots(uint64_t count) {
  return std::to_string(count) + (count == 1 ? " snapshot" : " snapshots");
}

// Regions of the observation grid, group by group of actions.
void PrintGroupedDifferences(const PlanDifferences& differences, int max_regions, std::ostream& out) {
  std::vector<int> order(differences.axes.size());
  for (size_t axis = 0; axis < order.size(); ++axis) order[axis] = static_cast<int>(axis);
  auto actions = [](const std::vector<std::string>& names) {
    std::string text;
    for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
    return text.empty() ? std::string("no step") : text;
  };
  for (const PlanDifferenceGroup& group : differences.groups) {
    out << "  old: " << actions(group.old_actions) << "\n  new: " << actions(group.new_actions) << "\n  ("
        << Snapshots(group.snapshots);
    if (group.old_actions == group.new_actions) out << "; the same actions, other targets or params";
    out << ")\n";
    for (size_t r = 0; r < group.regions.size(); ++r) {
      if (static_cast<int>(r) == max_regions) {
        out << "    ... " << group.regions.size() - r << " more regions\n";
        break;
      }
      const Region& region = group.regions[r];
      out << "    " << FormatRegion(region, differences.axes, order) << "  (" << Snapshots(region.states)
          << "), e.g. " << group.examples[r] << "\n";
    }
  }
}

// Plans every snapshot of `where` with both sides; returns how many differ.
// Snapshots that carry an `observation` (generated ones) are summed up as
// regions of their grid; others are listed one by one with both plans.
int DiffSnapshots(const std::string& where, const std::vector<SnapshotText>& snapshots,
                  const LoadedSide& old_side, const LoadedSide& new_side, const ParamOverrides& overrides,
                  int max_regions, std::ostream& out, std::ostream& err, bool& failed) {
  EvaluationOptions options;
  options.param_overrides = overrides;
  int planned = 0, differing = 0;
  std::string report;
  std::vector<Value> observed;
  std::vector<PlannedDifferently> different;
  for (const SnapshotText& input : snapshots) {
    auto snapshot = ParseSnapshot(input.text);
    if (!snapshot.ok()) {
      err << input.source << ": error: " << snapshot.error().message << "\n";
      failed = true;
      continue;
    }
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
    const Value* observation = snapshot->document.Find("observation");
    if (observation != nullptr) observed.push_back(*observation);
    const Result<Plan> old_plan =
        MakePlan(old_rule_sets, *snapshot, options, old_side.library->catalogue.get());
    const Result<Plan> new_plan =
        MakePlan(new_rule_sets, *snapshot, options, new_side.library->catalogue.get());
    const std::vector<std::string> before = PlanLines(old_plan), after = PlanLines(new_plan);
    if (before == after) continue;
    ++differing;
    different.push_back({input.source, observation != nullptr ? *observation : Value::Null(),
                         PlanActions(old_plan), PlanActions(new_plan)});
    report += "  " + input.source + "\n";
    for (const std::string& line : before) report += "    old: " + line + "\n";
    for (const std::string& line : after) report += "    new: " + line + "\n";
  }
  out << "snapshots in " << where << ": " << differing << " of " << planned << " planned differently";
  if (observed.empty()) {
    out << "\n" << report;
    return differing;
  }
  const PlanDifferences differences = GroupPlanDifferences(observed, different);
  out << ", by the actions of both plans (" << differences.groups.size()
      << " groups), over the observations\n";
  PrintGroupedDifferences(differences, max_regions, out);
  return differing;
}

// The snapshots a journal recorded, oldest first, each named by its
// evaluation: what the rules saw on real observations.
std::optional<std::vector<SnapshotText>> JournalSnapshots(const std::string& path, std::ostream& err) {
  if (!std::filesystem::is_regular_file(path)) {
    err << "ruleplane: no journal at " << path << "\n";
    return std::nullopt;
  }
  auto journal = Journal::OpenForReading(path);
  auto evaluations =
      journal.ok() ? (*journal)->Evaluations(0) : Result<std::vector<EvaluationRecord>>(journal.error());
  if (!evaluations.ok()) {
    err << "ruleplane: " << evaluations.error().message << "\n";
    return std::nullopt;
  }
  std::vector<SnapshotText> snapshots;
  for (auto record = evaluations->rbegin(); record != evaluations->rend(); ++record) {
    snapshots.push_back(
        {path + " evaluation " + std::to_string(record->id) + " (" + record->recorded_at + ")",
         FormatJson(record->snapshot.document)});
  }
  return snapshots;
}

}  // namespace

// A non-negative number option; false after a usage error.
int RunDiff(const Args& args, std::ostream& out, std::ostream& err) {
  if (HelpRequested(args)) return PrintUsage(kDiffUsage, out);
  Flags flags(
      {{"--param"}, {"--rules"}, {"--snapshots"}, {"--journal"}, {"--max-regions"}, {"--max-evaluations"}});
  if (!flags.Parse(args, err, kDiffUsage) || !flags.RequirePositional(2, 2, "two versions", err, kDiffUsage))
    return kExitUsage;
  const std::vector<std::string>& sides = flags.positional();
  const std::vector<std::string> rules_paths = flags.GetAll("--rules");
  const std::string snapshots_dir = flags.Get("--snapshots"), journal_path = flags.Get("--journal");
  ParamOverrides overrides;
  for (const std::string& assignment : flags.GetAll("--param")) {
    if (!ParseParamOption(assignment, overrides, err)) return kExitUsage;
  }
  int64_t max_regions = 3, max_evaluations = 2000000;
  if (!flags.GetCount("--max-regions", max_regions, err) ||
      !flags.GetCount("--max-evaluations", max_evaluations, err))
    return kExitUsage;
  auto old_side = LoadSide(sides[0], rules_paths, err);
  if (!old_side) return kExitUsage;
  auto new_side = LoadSide(sides[1], rules_paths, err);
  if (!new_side) return kExitUsage;
  RuleLibrary both;
  for (const LoadedSide* side : {&*old_side, &*new_side}) {
    both.files.insert(both.files.end(), side->library->files.begin(), side->library->files.end());
  }
  if (!OverridesAreDeclared(both, overrides, err)) return kExitUsage;
  // The snapshots are read before the rule sets are compared over their
  // whole domains (seconds, and a GB for the bundled ones): a path that is
  // not a journal or a directory of snapshots is an error at once.
  std::vector<std::pair<std::string, std::vector<SnapshotText>>> inputs;
  for (const bool from_journal : {false, true}) {
    const std::string& where = from_journal ? journal_path : snapshots_dir;
    if (where.empty()) continue;
    auto snapshots = from_journal ? JournalSnapshots(where, err) : ReadSnapshots(where, err);
    if (!snapshots) return kExitUsage;
    inputs.emplace_back(where, std::move(*snapshots));
  }

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
    const auto new_rules = FindByName(*new_side, old_rules->rule_set().name);
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
  for (const auto& [where, snapshots] : inputs) {
    differences += DiffSnapshots(where, snapshots, *old_side, *new_side, overrides,
                                 static_cast<int>(max_regions), out, err, failed);
  }
  if (failed) return kExitUsage;
  return differences > 0 ? kExitFinding : kExitOk;
}

}  // namespace ruleplane::cli
