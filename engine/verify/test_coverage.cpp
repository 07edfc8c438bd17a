#include "engine/verify/test_coverage.h"

#include <cstdio>

namespace ruleplane {
namespace {

std::string Where(const SourcePosition& position) {
  if (!position.known()) return "";
  return " (" + position.file + ":" + std::to_string(position.line) + ":" + std::to_string(position.column) +
         ")";
}

}  // namespace

TestCoverage::TestCoverage(const RuleSet& rule_set)
    : rule_set_(&rule_set), selected_(rule_set.rules.size(), false), cells_(rule_set.rules.size()) {
  for (size_t r = 0; r < rule_set.rules.size(); ++r) {
    const Rule& rule = rule_set.rules[r];
    cells_[r].resize(rule.cells.size() + (rule.condition ? 1 : 0));
  }
}

void TestCoverage::Record(const Decision& decision) {
  for (const int r : decision.selected) selected_[r] = true;
  for (const RuleTrace& trace : decision.trace) {
    if (trace.rule < 0 || trace.rule >= static_cast<int>(cells_.size())) continue;
    std::vector<CellSeen>& seen = cells_[trace.rule];
    for (size_t i = 0; i < trace.cells.size() && i < seen.size(); ++i) {
      if (!trace.cells[i].error.empty()) continue;
      (trace.cells[i].passed ? seen[i].seen_true : seen[i].seen_false) = true;
    }
  }
}

int TestCoverage::rules_selected() const {
  int count = 0;
  for (const bool selected : selected_) count += selected ? 1 : 0;
  return count;
}

int TestCoverage::outcomes() const {
  int count = 0;
  for (const auto& rule : cells_) count += 2 * static_cast<int>(rule.size());
  return count;
}

int TestCoverage::outcomes_seen() const {
  int count = 0;
  for (const auto& rule : cells_) {
    for (const CellSeen& cell : rule) count += (cell.seen_true ? 1 : 0) + (cell.seen_false ? 1 : 0);
  }
  return count;
}

double TestCoverage::Percent() const {
  const int total = rules() + outcomes();
  if (total == 0) return 100;
  return 100.0 * (rules_selected() + outcomes_seen()) / total;
}

std::string TestCoverage::Format() const {
  char percent[16];
  std::snprintf(percent, sizeof percent, "%.1f%%", Percent());
  std::string out = rule_set_->id() + ": " + percent + " (rules " + std::to_string(rules_selected()) + "/" +
                    std::to_string(rules()) + " selected, cell outcomes " + std::to_string(outcomes_seen()) +
                    "/" + std::to_string(outcomes()) + ")\n";
  for (size_t r = 0; r < selected_.size(); ++r) {
    const Rule& rule = rule_set_->rules[r];
    if (!selected_[r]) out += "  never selected: rule '" + rule.id + "'" + Where(rule.position) + "\n";
    for (size_t i = 0; i < cells_[r].size(); ++i) {
      const CellSeen& seen = cells_[r][i];
      if (seen.seen_true && seen.seen_false) continue;
      std::string what;
      SourcePosition position;
      if (i < rule.cells.size()) {
        const Cell& cell = rule.cells[i];
        what = "cell " + rule_set_->facts[cell.fact].name + ": \"" + cell.text + "\"";
        position = cell.position;
      } else {
        what = "condition \"" + rule.condition->text + "\"";
        position = rule.condition->position;
      }
      const std::string never = !seen.seen_true && !seen.seen_false ? "never evaluated"
                                : !seen.seen_true                   ? "never true"
                                                                    : "never false";
      out += "  " + never + ": rule '" + rule.id + "' " + what + Where(position) + "\n";
    }
  }
  return out;
}

}  // namespace ruleplane
