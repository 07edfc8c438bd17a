// RuleSetBuilder: builds a RuleSet in code, without the rule loader, for tests
// of the matcher. Expressions are compiled with the environment the loader
// uses: facts (a fact sees only earlier facts), params, `snapshot`, `now`, at
// the slots of FrameLayout.
//
//   RuleSetBuilder b(HitPolicy::kFirst);
//   b.Fact("n").Fact("ready");
//   b.Rule("quorum-lost", {Cmp("n", CompareOp::kGt, "0"), Range("ready", "0", "n", true, false)});
//   auto rule_set = b.Build();   // Result<std::shared_ptr<const RuleSet>>
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/expr/expression.h"
#include "engine/rule_file/rule_set.h"

namespace ruleplane::testing {

// A cell before compilation; `fact` names the column.
struct CellSpec {
  std::string fact;
  Cell::Kind kind = Cell::Kind::kAny;
  CompareOp op = CompareOp::kEq;
  std::string operand, low, high;
  bool low_inclusive = true, high_inclusive = true;
};

inline CellSpec Cmp(std::string fact, CompareOp op, std::string operand) {
  return CellSpec{std::move(fact), Cell::Kind::kCompare, op, std::move(operand), "", "", true, true};
}
inline CellSpec Range(std::string fact, std::string low, std::string high, bool low_inclusive,
                      bool high_inclusive) {
  return CellSpec{std::move(fact), Cell::Kind::kRange, CompareOp::kEq, "",
                  std::move(low),  std::move(high),    low_inclusive,  high_inclusive};
}
inline CellSpec In(std::string fact, std::string list) {
  return CellSpec{std::move(fact), Cell::Kind::kIn, CompareOp::kEq, std::move(list), "", "", true, true};
}
inline CellSpec Expr(std::string fact, std::string expression) {
  return CellSpec{
      std::move(fact), Cell::Kind::kExpression, CompareOp::kEq, std::move(expression), "", "", true, true};
}

// The cell as a rule author writes it: "> 0", "[0..n)", "in [1, 2]", "2 * f < n".
inline std::string CellText(const CellSpec& spec) {
  switch (spec.kind) {
    case Cell::Kind::kAny:
      return "-";
    case Cell::Kind::kCompare:
      return std::string(CompareOpText(spec.op)) + " " + spec.operand;
    case Cell::Kind::kRange:
      return std::string(spec.low_inclusive ? "[" : "(") + spec.low + ".." + spec.high +
             (spec.high_inclusive ? "]" : ")");
    case Cell::Kind::kIn:
      return "in " + spec.operand;
    case Cell::Kind::kExpression:
      return spec.operand;
  }
  return "";
}

struct ActionSketch {
  std::string action;
  std::string target;  // an expression text; empty: none
  std::vector<std::pair<std::string, std::string>> params;
};

class RuleSetBuilder {
 public:
  explicit RuleSetBuilder(HitPolicy policy, std::string file = "rules/test.yaml") {
    rule_set_.hit_policy = policy;
    rule_set_.file = std::move(file);
    rule_set_.name = "test";
    rule_set_.version = "1.0.0";
    rule_set_.subject = "EtcdCluster";
  }

  RuleSetBuilder& Fact(std::string name, std::string expression = "null") {
    facts_.emplace_back(std::move(name), std::move(expression));
    return *this;
  }
  RuleSetBuilder& Param(std::string name, ParamType type, Value default_value) {
    ruleplane::Param param;
    param.name = std::move(name);
    param.type = type;
    param.default_value = std::move(default_value);
    rule_set_.params.push_back(std::move(param));
    return *this;
  }
  RuleSetBuilder& Rule(std::string id, std::vector<CellSpec> cells, std::string condition = "",
                       int priority = 0, std::vector<ActionSketch> then = {}) {
    rules_.push_back(
        RuleSketch{std::move(id), std::move(cells), std::move(condition), priority, std::move(then)});
    return *this;
  }

  // Compiles every expression; the first error is returned.
  Result<std::shared_ptr<const RuleSet>> Build() const {
    auto rule_set = std::make_shared<RuleSet>(rule_set_);
    FrameLayout layout{static_cast<int>(facts_.size()), static_cast<int>(rule_set_.params.size())};
    expr::Environment env;
    for (int p = 0; p < layout.param_count; ++p) env.Declare(rule_set_.params[p].name, layout.param_slot(p));
    env.Declare("snapshot", layout.snapshot_slot());
    env.Declare("now", layout.now_slot());
    env.set_first_free_slot(layout.fixed_slots());
    int line = 1;
    auto compile = [&](const std::string& text, const expr::Environment& names) -> Result<Expression> {
      auto program = expr::Compile(text, names);
      if (!program.ok()) {
        Error error = program.error();
        error.message = "'" + text + "': " + error.message;
        return error;
      }
      return Expression{text, SourcePosition{rule_set_.file, line++, 7}, *program};
    };
    for (int f = 0; f < layout.fact_count; ++f) {
      ruleplane::Fact fact;
      fact.name = facts_[f].first;
      fact.position = SourcePosition{rule_set_.file, line, 5};
      auto expression = compile(facts_[f].second, env);
      if (!expression.ok()) return expression.error();
      fact.expression = *expression;
      rule_set->facts.push_back(std::move(fact));
      env.Declare(facts_[f].first, layout.fact_slot(f));
    }
    for (const RuleSketch& sketch : rules_) {
      ruleplane::Rule rule;
      rule.id = sketch.id;
      rule.priority = sketch.priority;
      rule.position = SourcePosition{rule_set_.file, line++, 5};
      for (const CellSpec& spec : sketch.cells) {
        Cell cell;
        cell.kind = spec.kind;
        cell.fact = rule_set->FindFact(spec.fact);
        if (cell.fact < 0) return Error{ErrorCode::kCheck, "no fact '" + spec.fact + "'", {}};
        cell.text = CellText(spec);
        cell.position = SourcePosition{rule_set_.file, line, 11};
        cell.op = spec.op;
        cell.low_inclusive = spec.low_inclusive;
        cell.high_inclusive = spec.high_inclusive;
        if (spec.kind == Cell::Kind::kRange) {
          auto low = compile(spec.low, env);
          if (!low.ok()) return low.error();
          auto high = compile(spec.high, env);
          if (!high.ok()) return high.error();
          cell.low = *low;
          cell.high = *high;
        } else if (spec.kind != Cell::Kind::kAny) {
          auto operand = compile(spec.operand, env);
          if (!operand.ok()) return operand.error();
          cell.operand = *operand;
        }
        rule.cells.push_back(std::move(cell));
      }
      if (!sketch.condition.empty()) {
        auto condition = compile(sketch.condition, env);
        if (!condition.ok()) return condition.error();
        rule.condition = *condition;
      }
      for (const ActionSketch& action : sketch.then) {
        ActionSpec spec;
        spec.action = action.action;
        spec.as = "item";
        if (!action.target.empty()) {
          auto target = compile(action.target, env);
          if (!target.ok()) return target.error();
          spec.target = *target;
        }
        for (const auto& [name, text] : action.params) {
          auto value = compile(text, env);
          if (!value.ok()) return value.error();
          spec.params.push_back(ActionParam{name, *value});
        }
        rule.then.push_back(std::move(spec));
      }
      rule_set->rules.push_back(std::move(rule));
    }
    return std::shared_ptr<const RuleSet>(std::move(rule_set));
  }

 private:
  struct RuleSketch {
    std::string id;
    std::vector<CellSpec> cells;
    std::string condition;
    int priority = 0;
    std::vector<ActionSketch> then;
  };
  RuleSet rule_set_;
  std::vector<std::pair<std::string, std::string>> facts_;
  std::vector<RuleSketch> rules_;
};

}  // namespace ruleplane::testing
