// ruleplane explain: why each rule matched or did not, cell by cell.
#include <algorithm>
#include <ostream>

#include "cli/commands.h"
#include "cli/snapshot_input.h"
#include "engine/plan/plan.h"

namespace ruleplane::cli {
namespace {

constexpr const char* kExplainUsage =
    "usage: ruleplane explain [--rules PATH|NAME@VERSION]... [--param NAME=VALUE]... SNAPSHOT.json [--rule "
    "ID]\n";

void ExplainRuleSet(const CompiledRuleSet& compiled, const expr::Frame& frame, const Decision& decision,
                    const std::string& only_rule, std::ostream& out) {
  const RuleSet& rule_set = compiled.rule_set();
  const FrameLayout& layout = compiled.layout();
  out << rule_set.id() << " (" << rule_set.file << "), hit policy " << HitPolicyName(rule_set.hit_policy)
      << "\n";
  out << "  params:\n";
  for (size_t i = 0; i < rule_set.params.size(); ++i) {
    out << "    " << rule_set.params[i].name << " = " << frame[layout.param_slot(i)].DebugString() << "\n";
  }
  out << "  facts:\n";
  for (size_t i = 0; i < rule_set.facts.size(); ++i) {
    out << "    " << rule_set.facts[i].name << " = " << frame[layout.fact_slot(i)].DebugString() << "\n";
  }
  if (decision.violation) out << "  VIOLATION: " << decision.violation->message << "\n";
  for (const RuleTrace& trace : decision.trace) {
    const Rule& rule = rule_set.rules[trace.rule];
    if (!only_rule.empty() && rule.id != only_rule) continue;
    const bool selected =
        std::find(decision.selected.begin(), decision.selected.end(), trace.rule) != decision.selected.end();
    out << "\n  rule " << rule.id << " (line " << rule.position.line << "): "
        << (selected        ? "SELECTED"
            : trace.matched ? "matched, not selected by the hit policy"
                            : "not matched")
        << "\n";
    if (!rule.description.empty()) out << "    " << rule.description << "\n";
    for (const CellTrace& cell : trace.cells) {
      out << "    " << (cell.passed ? "pass " : "FAIL ");
      if (cell.fact >= 0) {
        out << rule_set.facts[cell.fact].name << ": " << cell.text << "   (" << rule_set.facts[cell.fact].name
            << " = " << cell.fact_value.DebugString() << ")";
      } else {
        out << "condition: " << cell.text;
      }
      if (!cell.error.empty()) out << "   error: " << cell.error;
      out << "\n";
    }
    if (trace.cells.empty()) out << "    (no cells: matches every snapshot)\n";
  }
}

}  // namespace

int RunExplain(const Args& args, std::istream& in, std::ostream& out, std::ostream& err) {
  auto parsed = ParseEvaluationArgs(args, {"--rule"}, kExplainUsage, err);
  if (!parsed) return kExitUsage;
  int exit_code = kExitOk;
  auto input = LoadEvaluationInput(*parsed, in, err, exit_code);
  if (!input) return exit_code;

  bool found_rule = parsed->rule.empty();
  for (const auto& compiled : input->rule_sets) {
    auto frame =
        compiled->DeriveFacts(input->snapshot, OverridesDeclaredBy(compiled->rule_set(), input->overrides));
    if (!frame.ok()) {
      err << "ruleplane: " << parsed->snapshot_path << ": " << frame.error().message << "\n";
      return kExitUsage;
    }
    auto decision = compiled->Match(*frame, /*trace=*/true);
    if (!decision.ok()) {
      err << "ruleplane: " << decision.error().message << "\n";
      return kExitFinding;
    }
    for (const Rule& rule : compiled->rule_set().rules) found_rule |= rule.id == parsed->rule;
    ExplainRuleSet(*compiled, *frame, *decision, parsed->rule, out);
    out << "\n";
  }
  if (!found_rule) {
    err << "ruleplane: no rule '" << parsed->rule << "' in the selected rule files\n";
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace ruleplane::cli
