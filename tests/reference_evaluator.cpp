#include "tests/reference_evaluator.h"

#include <algorithm>
#include <utility>

namespace ruleplane::testing {
namespace {

std::string Optional(const std::optional<Expression>& expression) {
  return expression ? "some:" + expression->text : "none";
}

bool SameActions(const Rule& a, const Rule& b) {
  if (a.then.size() != b.then.size()) return false;
  for (size_t i = 0; i < a.then.size(); ++i) {
    const ActionSpec& x = a.then[i];
    const ActionSpec& y = b.then[i];
    if (x.action != y.action || x.as != y.as || Optional(x.for_each) != Optional(y.for_each) ||
        Optional(x.target) != Optional(y.target) || x.params.size() != y.params.size()) {
      return false;
    }
    for (size_t p = 0; p < x.params.size(); ++p) {
      if (x.params[p].name != y.params[p].name || x.params[p].value.text != y.params[p].value.text)
        return false;
    }
  }
  return true;
}

}  // namespace

std::string ReferenceEvaluator::CellExpressionText(const RuleSet& rule_set, const Cell& cell) {
  const std::string& fact = rule_set.facts[cell.fact].name;
  switch (cell.kind) {
    case Cell::Kind::kAny:
      return "true";
    case Cell::Kind::kCompare:
      return fact + " " + CompareOpText(cell.op) + " (" + cell.operand->text + ")";
    case Cell::Kind::kRange:
      return "(" + fact + (cell.low_inclusive ? " >= (" : " > (") + cell.low->text + ")) && (" + fact +
             (cell.high_inclusive ? " <= (" : " < (") + cell.high->text + "))";
    case Cell::Kind::kIn:
      return fact + " in (" + cell.operand->text + ")";
    case Cell::Kind::kExpression:
      return "(" + cell.operand->text + ")";
  }
  return "false";
}

Result<ReferenceEvaluator> ReferenceEvaluator::Build(std::shared_ptr<const RuleSet> rule_set) {
  ReferenceEvaluator reference;
  const FrameLayout layout{static_cast<int>(rule_set->facts.size()),
                           static_cast<int>(rule_set->params.size())};
  expr::Environment env;
  for (int f = 0; f < layout.fact_count; ++f) env.Declare(rule_set->facts[f].name, layout.fact_slot(f));
  for (int p = 0; p < layout.param_count; ++p) env.Declare(rule_set->params[p].name, layout.param_slot(p));
  env.Declare("snapshot", layout.snapshot_slot());
  env.Declare("now", layout.now_slot());
  env.set_first_free_slot(layout.fixed_slots());
  reference.fixed_slots_ = layout.fixed_slots();
  reference.frame_size_ = layout.fixed_slots();
  for (const Rule& rule : rule_set->rules) {
    RuleConjuncts conjuncts;
    for (const Cell& cell : rule.cells) {
      if (cell.kind != Cell::Kind::kAny) conjuncts.texts.push_back(CellExpressionText(*rule_set, cell));
    }
    if (rule.condition) conjuncts.texts.push_back("(" + rule.condition->text + ")");
    for (const std::string& text : conjuncts.texts) {
      auto program = expr::Compile(text, env);
      if (!program.ok()) {
        return Error{program.error().code, "reference: '" + text + "': " + program.error().message, {}};
      }
      reference.frame_size_ = std::max(reference.frame_size_, (*program)->frame_size());
      conjuncts.programs.push_back(*program);
    }
    reference.rules_.push_back(std::move(conjuncts));
  }
  reference.rule_set_ = std::move(rule_set);
  return reference;
}

ReferenceEvaluator::Outcome ReferenceEvaluator::Evaluate(const std::vector<Value>& frame) const {
  expr::Frame scratch(frame_size_);
  std::copy(frame.begin(), frame.begin() + fixed_slots_, scratch.begin());
  Outcome outcome;
  const RuleSet& rule_set = *rule_set_;
  for (size_t r = 0; r < rules_.size(); ++r) {
    bool any_false = false;
    std::optional<std::string> first_error;
    for (size_t i = 0; i < rules_[r].programs.size(); ++i) {
      const Value result = rules_[r].programs[i]->Evaluate(scratch);
      if (result.is_bool()) {
        any_false = any_false || !result.bool_value();
      } else if (!first_error) {
        first_error =
            rules_[r].texts[i] + ": " + (result.is_error() ? result.error_message() : result.TypeName());
      }
    }
    if (any_false) continue;
    if (first_error) {
      outcome.matched.clear();
      outcome.error_rule = rule_set.rules[r].id;
      outcome.error = *first_error;
      return outcome;
    }
    outcome.matched.push_back(static_cast<int>(r));
  }
  const std::vector<int>& matched = outcome.matched;
  if (matched.empty()) return outcome;
  switch (rule_set.hit_policy) {
    case HitPolicy::kUnique:
      if (matched.size() == 1) {
        outcome.selected = matched;
      } else {
        outcome.violation = true;
      }
      break;
    case HitPolicy::kAny:
      for (const int rule : matched) {
        if (!SameActions(rule_set.rules[rule], rule_set.rules[matched[0]])) outcome.violation = true;
      }
      if (!outcome.violation) outcome.selected = {matched[0]};
      break;
    case HitPolicy::kFirst:
      outcome.selected = {matched[0]};
      break;
    case HitPolicy::kPriority: {
      std::vector<int> by_priority = matched;
      std::stable_sort(by_priority.begin(), by_priority.end(),
                       [&](int a, int b) { return rule_set.rules[a].priority > rule_set.rules[b].priority; });
      outcome.selected = {by_priority[0]};
      break;
    }
    case HitPolicy::kRuleOrder:
    case HitPolicy::kCollect:
      outcome.selected = matched;
      break;
  }
  return outcome;
}

}  // namespace ruleplane::testing
