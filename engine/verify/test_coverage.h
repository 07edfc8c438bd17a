// TestCoverage: what a rule file's tests exercised. A rule is covered when a
// test selected it; a cell (and a rule's condition) when tests saw it both
// hold and fail. The percentage counts both kinds of item together.
//
//   TestCoverage coverage(rule_set);
//   RunRuleTest(compiled, test, catalogue, reader, &coverage);   // for each test
//   if (coverage.Percent() < 80) std::cout << coverage.Format();
#pragma once

#include <string>
#include <vector>

#include "engine/match/compiled_rule_set.h"
#include "engine/rule_file/rule_set.h"

namespace ruleplane {

class TestCoverage {
 public:
  explicit TestCoverage(const RuleSet& rule_set);

  // One test's evaluation, traced (EvaluationOptions::trace).
  void Record(const Decision& decision);

  int rules() const { return static_cast<int>(selected_.size()); }
  int rules_selected() const;
  int outcomes() const;  // two per cell and condition: true and false
  int outcomes_seen() const;
  double Percent() const;  // 100 for a table without rules

  // "etcd-druid-status@1.0.0: 87.5% (rules 15/16 selected, cell outcomes 60/70)"
  // and a line per rule never selected and per cell never true / never false.
  std::string Format() const;

 private:
  struct CellSeen {
    bool seen_true = false;
    bool seen_false = false;
  };
  const RuleSet* rule_set_;
  std::vector<bool> selected_;                // per rule
  std::vector<std::vector<CellSeen>> cells_;  // per rule: its cells, then its condition
};

}  // namespace ruleplane
