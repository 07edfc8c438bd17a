#include "engine/match/compiled_rule_set.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <utility>

#include "engine/common/bitset.h"
#include "engine/match/cell_predicate.h"
#include "engine/match/column_index.h"
#include "engine/match/hit_policy.h"

namespace ruleplane {
namespace {

struct CompiledRule {
  std::vector<CellPredicate> cells;  // the rule's cells, "-" left out, in the order written
  std::vector<int> cell_column;      // per cell: its ColumnIndex when literal, else -1
  // Cells to evaluate, cheapest first (no program to run), as the order does
  // not change the verdict: every cell, and the cells the indexes cannot answer.
  std::vector<int> all_cells;
  std::vector<int> residual_cells;
  const Expression* condition = nullptr;
};

using Truth = CellPredicate::Truth;

// A residual cell or condition that has a QuickCheck, shared by every rule
// that has the same one: Match runs it once per frame, and only while a
// candidate rule still has it.
struct SharedCheck {
  QuickCheck check;
  std::vector<uint64_t> rules;  // the rules that have it
};

Truth CheckCondition(const Expression& condition, expr::Frame& frame, Value& error, expr::Budget* budget) {
  Value result = condition.program->Evaluate(frame, budget);
  if (result.is_bool()) return result.bool_value() ? Truth::kTrue : Truth::kFalse;
  error = result.is_error()
              ? std::move(result)
              : Value::Error(std::string("the condition must be a bool, got ") + result.TypeName());
  return Truth::kError;
}

Truth CheckCell(const CellPredicate& cell, expr::Frame& frame, Value& error, expr::Budget* budget) {
  const int quick = cell.quick_check().Run(frame);
  if (quick >= 0) return quick ? Truth::kTrue : Truth::kFalse;
  return cell.Check(frame[cell.fact_slot()], frame, error, budget);
}

// Why `value` is outside `domain`: "" when the domain says no more, a detail
// (the bounds' values) when it helps; nullopt when the value is inside.
std::optional<std::string> OutsideDomain(const Domain& domain, const Value& value, expr::Frame& frame,
                                         expr::Budget* budget) {
  switch (domain.kind) {
    case Domain::Kind::kNone:
      return std::nullopt;
    case Domain::Kind::kBool:
      return value.is_bool() ? std::nullopt : std::optional<std::string>("");
    case Domain::Kind::kEnum:
      for (const Value& allowed : domain.enum_values) {
        if (allowed == value) return std::nullopt;
      }
      return "";
    case Domain::Kind::kInt:
      break;
  }
  if (!value.is_int()) return "";
  const Value low = domain.low->program->Evaluate(frame, budget);
  const Value high = domain.high->program->Evaluate(frame, budget);
  if (!low.is_int() || !high.is_int()) {
    return " (its bounds are " + low.DebugString() + " and " + high.DebugString() + ")";
  }
  if (low.int_value() <= value.int_value() && value.int_value() <= high.int_value()) return std::nullopt;
  if (domain.low->program->constant() && domain.high->program->constant()) return "";
  return " = [" + std::to_string(low.int_value()) + ", " + std::to_string(high.int_value()) + "]";
}

// Slots a frame needs for every expression of the rule set, the planner's
// (forEach, targets, action params) and the verifier's included.
int FrameSize(const RuleSet& rules, const FrameLayout& layout) {
  int size = layout.fixed_slots();
  auto account = [&size](const Expression& expression) {
    if (expression.program) size = std::max(size, expression.program->frame_size());
  };
  auto account_optional = [&account](const std::optional<Expression>& expression) {
    if (expression) account(*expression);
  };
  for (const Fact& fact : rules.facts) {
    account(fact.expression);
    account_optional(fact.domain.low);
    account_optional(fact.domain.high);
  }
  account_optional(rules.applies_when);
  for (const Expression& expression : rules.constraints) account(expression);
  for (const Expression& expression : rules.invariants) account(expression);
  for (const Rule& rule : rules.rules) {
    for (const Cell& cell : rule.cells) {
      account_optional(cell.operand);
      account_optional(cell.low);
      account_optional(cell.high);
    }
    account_optional(rule.condition);
    for (const ActionSpec& action : rule.then) {
      account_optional(action.for_each);
      account_optional(action.target);
      for (const ActionParam& param : action.params) account(param.value);
    }
  }
  return size;
}

std::string FileAndPosition(const SourcePosition& position) {
  if (!position.known()) return position.file;
  return position.file + ":" + std::to_string(position.line) + ":" + std::to_string(position.column);
}

std::string WithPosition(const std::string& what, const SourcePosition& position) {
  const std::string where = FileAndPosition(position);
  return where.empty() ? what : what + " (" + where + ")";
}

}  // namespace

struct CompiledRuleSet::Index {
  std::vector<CompiledRule> rules;
  std::vector<ColumnIndex> columns;
  int words = 1;
  std::vector<uint64_t> all_rules;
  std::vector<SharedCheck> shared_checks;  // the cheapest (no program to run) first
  std::vector<uint64_t> slow_rules;        // rules with a residual cell or condition without a shortcut
  std::vector<Value> param_defaults;
  std::map<std::string, int, std::less<>> param_by_name;
  HitPolicySelector selector;

  explicit Index(const RuleSet& rule_set) : selector(rule_set) {}

  // Whether the column indexes decided cell `i` of `rule` in this match: a
  // literal cell whose column's value could be classified. `fallback_columns`
  // flags the columns that could not (null: none).
  static bool Decided(const CompiledRule& rule, int i, const uint8_t* fallback_columns) {
    const int column = rule.cell_column[i];
    return column >= 0 && (fallback_columns == nullptr || !fallback_columns[column]);
  }

  void ShareChecks();
  template <int kWords>
  std::optional<Error> Match(const RuleSet& rule_set, expr::Frame& frame, Decision& decision,
                             expr::Budget* budget) const;
  Truth EvaluateRule(int rule, expr::Frame& frame, const uint8_t* fallback_columns, Value& scratch,
                     expr::Budget* budget) const;
  Error RuleError(const RuleSet& rule_set, int rule, expr::Frame& frame, expr::Budget* budget,
                  const uint8_t* fallback_columns) const;
  Error DescribeError(const RuleSet& rule_set, int rule, int cell, const Value& error) const;
};

void CompiledRuleSet::Index::ShareChecks() {
  slow_rules.assign(words, 0);
  std::map<std::string, int, std::less<>> check_by_key;
  // A rule with a cell or condition that has no QuickCheck is slow: EvaluateRule decides it.
  auto share = [&](const std::string& key, const QuickCheck& check, int rule) {
    if (!check.usable()) {
      bitset::Set(slow_rules.data(), rule);
      return;
    }
    auto [it, inserted] = check_by_key.emplace(key, static_cast<int>(shared_checks.size()));
    if (inserted) shared_checks.push_back(SharedCheck{check, std::vector<uint64_t>(words, 0)});
    bitset::Set(shared_checks[it->second].rules.data(), rule);
  };
  for (int r = 0; r < static_cast<int>(rules.size()); ++r) {
    const CompiledRule& rule = rules[r];
    for (const int i : rule.residual_cells) {
      const CellPredicate& cell = rule.cells[i];
      // Cells of one column with the same text are the same test.
      share(std::to_string(cell.fact_slot()) + "\n" + cell.cell().text, cell.quick_check(), r);
    }
    if (rule.condition != nullptr) {
      share("condition\n" + rule.condition->text, QuickCheck::Program(*rule.condition->program), r);
    }
  }
  // Comparisons first, programs after: a program runs only if a rule still needs it.
  std::stable_sort(shared_checks.begin(), shared_checks.end(),
                   [](const SharedCheck& a, const SharedCheck& b) {
                     return a.check.runs_program() < b.check.runs_program();
                   });
}

// Evaluates what the column indexes did not decide: non-literal cells,
// literal cells of columns that fell back, and the condition. They combine as
// CEL's && does: false when any is false (even if another could not be
// evaluated), else an error when any is an error, else true. So the order of
// evaluation does not matter: the indexes decide literal cells first, and the
// cells that run no program go before those that do.
Truth CompiledRuleSet::Index::EvaluateRule(int rule, expr::Frame& frame, const uint8_t* fallback_columns,
                                           Value& scratch, expr::Budget* budget) const {
  const CompiledRule& compiled = rules[rule];
  bool failed = false;
  for (const int i : fallback_columns ? compiled.all_cells : compiled.residual_cells) {
    if (Decided(compiled, i, fallback_columns)) continue;
    switch (CheckCell(compiled.cells[i], frame, scratch, budget)) {
      case Truth::kTrue:
        break;
      case Truth::kFalse:
        return Truth::kFalse;
      case Truth::kError:
        failed = true;
        break;
    }
  }
  if (compiled.condition != nullptr) {
    const Truth condition = CheckCondition(*compiled.condition, frame, scratch, budget);
    if (condition == Truth::kFalse) return condition;
    failed = failed || condition == Truth::kError;
  }
  return failed ? Truth::kError : Truth::kTrue;
}

// The error of a rule that EvaluateRule found in error: evaluated again (the
// programs are pure), in the order written, to name the first failing cell.
Error CompiledRuleSet::Index::RuleError(const RuleSet& rule_set, int rule, expr::Frame& frame,
                                        expr::Budget* budget, const uint8_t* fallback_columns) const {
  const CompiledRule& compiled = rules[rule];
  Value error;
  for (int i = 0; i < static_cast<int>(compiled.cells.size()); ++i) {
    if (Decided(compiled, i, fallback_columns)) continue;
    if (CheckCell(compiled.cells[i], frame, error, budget) == Truth::kError)
      return DescribeError(rule_set, rule, i, error);
  }
  if (compiled.condition != nullptr &&
      CheckCondition(*compiled.condition, frame, error, budget) == Truth::kError) {
    return DescribeError(rule_set, rule, -1, error);
  }
  return Error{ErrorCode::kInternal, "rule '" + rule_set.rules[rule].id + "' failed without an error", {}};
}

// `cell` indexes CompiledRule::cells; -1 is the condition.
Error CompiledRuleSet::Index::DescribeError(const RuleSet& rule_set, int rule, int cell,
                                            const Value& error) const {
  const Rule& source = rule_set.rules[rule];
  std::string what = "rule '" + source.id + "', ";
  SourcePosition position;
  if (cell >= 0) {
    const Cell& failed = rules[rule].cells[cell].cell();
    what += "cell " + rule_set.facts[failed.fact].name + ": \"" + failed.text + "\"";
    position = failed.position;
  } else {
    what += "condition \"" + source.condition->text + "\"";
    position = source.condition->position;
  }
  if (position.file.empty()) position.file = rule_set.file;
  return Error{ErrorCode::kEvaluation, WithPosition(what, position) + ": " + error.error_message(), position};
}

CompiledRuleSet::~CompiledRuleSet() = default;

Result<std::shared_ptr<const CompiledRuleSet>> CompiledRuleSet::Compile(
    std::shared_ptr<const RuleSet> rule_set) {
  if (!rule_set) return Error{ErrorCode::kInvalidArgument, "no rule set to compile", {}};
  const RuleSet& rules = *rule_set;
  std::shared_ptr<CompiledRuleSet> compiled(new CompiledRuleSet());
  compiled->layout_.fact_count = static_cast<int>(rules.facts.size());
  compiled->layout_.param_count = static_cast<int>(rules.params.size());
  const FrameLayout& layout = compiled->layout_;
  auto index = std::make_unique<Index>(rules);

  std::vector<std::string> slot_names;
  for (const Fact& fact : rules.facts) slot_names.push_back(fact.name);
  for (const Param& param : rules.params) slot_names.push_back(param.name);
  slot_names.push_back("snapshot");
  slot_names.push_back("now");

  for (int p = 0; p < layout.param_count; ++p) {
    const Param& param = rules.params[p];
    auto converted = ConvertParam(param, param.default_value);
    if (!converted.ok()) {
      return Error{ErrorCode::kInvalidRuleFile, "default of " + converted.error().message, param.position};
    }
    index->param_defaults.push_back(std::move(converted).value());
    index->param_by_name.emplace(param.name, p);
  }
  for (const Fact& fact : rules.facts) {
    if (!fact.expression.program) {
      return Error{ErrorCode::kInternal, "fact '" + fact.name + "' has no compiled expression",
                   fact.position};
    }
  }

  const int rule_count = static_cast<int>(rules.rules.size());
  index->rules.resize(rule_count);
  for (int r = 0; r < rule_count; ++r) {
    const Rule& rule = rules.rules[r];
    CompiledRule& target = index->rules[r];
    for (int c = 0; c < static_cast<int>(rule.cells.size()); ++c) {
      const Cell& cell = rule.cells[c];
      if (cell.kind == Cell::Kind::kAny) continue;
      auto predicate = CellPredicate::Compile(rules, r, c, slot_names);
      if (!predicate.ok()) return predicate.error();
      target.cells.push_back(std::move(predicate).value());
    }
    if (rule.condition) {
      if (!rule.condition->program) {
        return Error{ErrorCode::kInternal, "rule '" + rule.id + "': the condition has no compiled program",
                     rule.condition->position};
      }
      target.condition = &*rule.condition;
    }
  }
  // Pointers into index->rules[*].cells are stable from here on.
  std::vector<std::vector<const CellPredicate*>> literal_cells(rules.facts.size());
  for (CompiledRule& rule : index->rules) {
    for (const CellPredicate& cell : rule.cells) {
      if (cell.literal()) literal_cells[cell.fact_slot()].push_back(&cell);
    }
  }
  std::vector<int> column_of_fact(rules.facts.size(), -1);
  for (int fact = 0; fact < layout.fact_count; ++fact) {
    if (literal_cells[fact].empty()) continue;
    column_of_fact[fact] = static_cast<int>(index->columns.size());
    index->columns.emplace_back(layout.fact_slot(fact), literal_cells[fact], rule_count);
  }
  for (CompiledRule& rule : index->rules) {
    for (int i = 0; i < static_cast<int>(rule.cells.size()); ++i) {
      const CellPredicate& cell = rule.cells[i];
      rule.cell_column.push_back(cell.literal() ? column_of_fact[cell.fact_slot()] : -1);
      rule.all_cells.push_back(i);
      if (!cell.literal()) rule.residual_cells.push_back(i);
    }
    auto cheapest_first = [&rule](int a, int b) { return rule.cells[a].direct() > rule.cells[b].direct(); };
    std::stable_sort(rule.all_cells.begin(), rule.all_cells.end(), cheapest_first);
    std::stable_sort(rule.residual_cells.begin(), rule.residual_cells.end(), cheapest_first);
  }
  index->words = bitset::WordCount(rule_count);
  index->all_rules.resize(index->words);
  bitset::SetFirst(index->all_rules.data(), index->words, rule_count);
  index->ShareChecks();

  compiled->frame_size_ = FrameSize(rules, layout);
  compiled->index_ = std::move(index);
  compiled->rule_set_ = std::move(rule_set);
  return std::shared_ptr<const CompiledRuleSet>(std::move(compiled));
}

Result<expr::Frame> CompiledRuleSet::BindInputs(const Snapshot& snapshot,
                                                const ParamOverrides& overrides) const {
  const RuleSet& rules = *rule_set_;
  if (!snapshot.kind.empty() && !rules.subject.empty() && snapshot.subject() != rules.subject) {
    return Error{ErrorCode::kInvalidSnapshot,
                 "rule set '" + rules.id() + "' evaluates " + rules.subject + "Snapshot documents, not " +
                     snapshot.kind,
                 {}};
  }
  expr::Frame frame(frame_size_);
  for (int p = 0; p < layout_.param_count; ++p) frame[layout_.param_slot(p)] = index_->param_defaults[p];
  if (snapshot.params.is_map()) {
    for (const auto& [key, value] : snapshot.params.map_value()) {
      if (!key.is_string()) continue;
      const auto it = index_->param_by_name.find(key.string_value());
      if (it == index_->param_by_name.end()) continue;
      auto converted = ConvertParam(rules.params[it->second], value);
      if (!converted.ok()) {
        return Error{ErrorCode::kInvalidSnapshot, "snapshot params: " + converted.error().message, {}};
      }
      frame[layout_.param_slot(it->second)] = std::move(converted).value();
    }
  }
  for (const auto& [name, value] : overrides) {
    const auto it = index_->param_by_name.find(name);
    if (it == index_->param_by_name.end()) {
      std::string declared;
      for (const Param& param : rules.params) declared += (declared.empty() ? "" : ", ") + param.name;
      return Error{ErrorCode::kInvalidArgument,
                   "unknown param '" + name + "' for rule set '" + rules.id() +
                       "' (declared: " + (declared.empty() ? "none" : declared) + ")",
                   {}};
    }
    auto converted = ConvertParam(rules.params[it->second], value);
    if (!converted.ok()) return converted.error();
    frame[layout_.param_slot(it->second)] = std::move(converted).value();
  }
  frame[layout_.snapshot_slot()] = snapshot.document;
  frame[layout_.now_slot()] = Value::MakeTimestamp(snapshot.observed_at);
  return frame;
}

Result<bool> CompiledRuleSet::AppliesTo(const Snapshot& snapshot, const ParamOverrides& overrides,
                                        expr::Budget* budget) const {
  const RuleSet& rules = *rule_set_;
  if (!rules.applies_when) return true;
  expr::Budget own;
  if (budget == nullptr) budget = &own;
  auto frame = BindInputs(snapshot, overrides);
  if (!frame.ok()) return frame.error();
  const Value applies = rules.applies_when->program->Evaluate(*frame, budget);
  if (applies.is_bool()) return applies.bool_value();
  SourcePosition position = rules.applies_when->position;
  if (position.file.empty()) position.file = rules.file;
  return Error{
      ErrorCode::kInvalidSnapshot,
      WithPosition("appliesWhen", position) + " cannot be decided: " +
          (applies.is_error() ? applies.error_message() : "it is " + applies.DebugString() + ", not a bool"),
      position};
}

Result<expr::Frame> CompiledRuleSet::DeriveFacts(const Snapshot& snapshot, const ParamOverrides& overrides,
                                                 expr::Budget* budget) const {
  expr::Budget own;
  if (budget == nullptr) budget = &own;
  const RuleSet& rules = *rule_set_;
  auto bound = BindInputs(snapshot, overrides);
  if (!bound.ok()) return bound.error();
  expr::Frame& frame = *bound;
  for (int f = 0; f < layout_.fact_count; ++f) {
    const Fact& fact = rules.facts[f];
    Value value = fact.expression.program->Evaluate(frame, budget);
    if (value.is_error()) {
      SourcePosition position = fact.expression.position.known() ? fact.expression.position : fact.position;
      if (position.file.empty()) position.file = rules.file;
      return Error{
          ErrorCode::kInvalidSnapshot,
          WithPosition("fact '" + fact.name + "'", position) + " cannot be derived: " + value.error_message(),
          position};
    }
    if (!fact.plan_outside_domain) {
      if (std::optional<std::string> outside = OutsideDomain(fact.domain, value, frame, budget)) {
        SourcePosition position = fact.domain.position;
        if (position.file.empty()) position.file = rules.file;
        return Error{ErrorCode::kInvalidSnapshot,
                     WithPosition("fact '" + fact.name + "'", position) + " is " + value.DebugString() +
                         ", outside its declared domain " + fact.domain.text + *outside +
                         " (verify proves the rules only inside it; `outsideDomain: plan` plans anyway)",
                     position};
      }
    }
    frame[layout_.fact_slot(f)] = std::move(value);
  }
  return bound;
}

Result<Decision> CompiledRuleSet::Match(expr::Frame& frame, bool trace, expr::Budget* budget) const {
  if (trace) return MatchWithTrace(frame, budget);
  Decision decision;
  if (std::optional<Error> error = Match(frame, decision, budget)) return *std::move(error);
  return decision;
}

// Every cell of every rule, no index and no short-circuit, so that a reader
// can see every reason a rule did not match.
Result<Decision> CompiledRuleSet::MatchWithTrace(expr::Frame& frame, expr::Budget* budget) const {
  if (static_cast<int>(frame.size()) < frame_size_) frame.resize(frame_size_);
  const RuleSet& rules = *rule_set_;
  const Index& index = *index_;
  Result<Decision> result{Decision{}};
  Decision& decision = result.value();
  for (int r = 0; r < static_cast<int>(index.rules.size()); ++r) {
    const CompiledRule& rule = index.rules[r];
    RuleTrace& rule_trace = decision.trace.emplace_back();
    rule_trace.rule = r;
    bool any_false = false;
    int first_error = -2;  // a cell index, -1 for the condition
    Value first_error_value;
    auto record = [&](CellTrace cell_trace, Truth truth, Value error, int conjunct) {
      cell_trace.passed = truth == Truth::kTrue;
      any_false = any_false || truth == Truth::kFalse;
      if (truth == Truth::kError) {
        cell_trace.error = error.error_message();
        if (first_error == -2) {
          first_error = conjunct;
          first_error_value = std::move(error);
        }
      }
      rule_trace.cells.push_back(std::move(cell_trace));
    };
    for (int i = 0; i < static_cast<int>(rule.cells.size()); ++i) {
      const CellPredicate& cell = rule.cells[i];
      Value error;
      const Truth truth = cell.Check(frame[cell.fact_slot()], frame, error, budget);
      record(
          CellTrace{
              cell.cell().fact, cell.cell().text, cell.cell().position, frame[cell.fact_slot()], false, {}},
          truth, std::move(error), i);
    }
    if (rule.condition != nullptr) {
      Value error;
      const Truth truth = CheckCondition(*rule.condition, frame, error, budget);
      record(CellTrace{-1, rule.condition->text, rule.condition->position, Value(), false, {}}, truth,
             std::move(error), -1);
    }
    if (!any_false && first_error != -2) return index.DescribeError(rules, r, first_error, first_error_value);
    rule_trace.matched = !any_false;
    if (rule_trace.matched) decision.matched.push_back(r);
  }
  index.selector.Select(decision.matched, decision.selected, decision.violation);
  return result;
}

std::optional<Error> CompiledRuleSet::Match(expr::Frame& frame, Decision& decision,
                                            expr::Budget* budget) const {
  if (static_cast<int>(frame.size()) < frame_size_) frame.resize(frame_size_);
  decision.matched.clear();
  decision.trace.clear();
  // Tables of up to 64 rules, nearly all, get a copy whose bitsets are registers.
  return index_->words == 1 ? index_->Match<1>(*rule_set_, frame, decision, budget)
                            : index_->Match<0>(*rule_set_, frame, decision, budget);
}

// `kWords`: the words of a bitset when known at compile time, else 0.
template <int kWords>
std::optional<Error> CompiledRuleSet::Index::Match(const RuleSet& rule_set, expr::Frame& frame,
                                                   Decision& decision, expr::Budget* budget) const {
  constexpr int kSmall = kWords > 0 ? kWords : 4;
  const int word_count = kWords > 0 ? kWords : words;
  uint64_t small_candidates[kSmall], small_evaluate[kSmall];
  std::vector<uint64_t> large_candidates, large_evaluate;
  uint64_t* candidates = small_candidates;
  uint64_t* evaluate = small_evaluate;  // rules to evaluate in full, with EvaluateRule
  if (word_count > kSmall) {
    large_candidates.resize(word_count);
    large_evaluate.resize(word_count);
    candidates = large_candidates.data();
    evaluate = large_evaluate.data();
  }
  for (int w = 0; w < word_count; ++w) candidates[w] = all_rules[w];
  std::vector<uint8_t> fallback;  // per column, whether its value fell back; allocated only then
  for (size_t c = 0; c < columns.size(); ++c) {
    const ColumnIndex& column = columns[c];
    const uint64_t* satisfied = column.Lookup(frame[column.fact_slot()]);
    if (satisfied != nullptr) {
      bitset::AndWith(candidates, satisfied, word_count);
    } else {
      fallback.resize(columns.size());
      fallback[c] = 1;
    }
  }
  const uint8_t* fallback_columns = fallback.empty() ? nullptr : fallback.data();
  if (fallback_columns != nullptr) {
    for (int w = 0; w < word_count; ++w) evaluate[w] = candidates[w];
  } else {
    // The shared checks decide the rules that have no slow cell alone.
    for (int w = 0; w < word_count; ++w) evaluate[w] = candidates[w] & slow_rules[w];
    for (const SharedCheck& check : shared_checks) {
      if (!bitset::Intersects(candidates, check.rules.data(), word_count)) continue;
      const int truth = check.check.Run(frame);
      if (truth == 0) bitset::AndNotWith(candidates, check.rules.data(), word_count);
      if (truth < 0) bitset::OrWithBoth(evaluate, candidates, check.rules.data(), word_count);
    }
  }
  int failed_rule = -1;
  Value scratch;
  bitset::ForEach(candidates, word_count, [&](int r) {
    const Truth truth =
        bitset::Test(evaluate, r) ? EvaluateRule(r, frame, fallback_columns, scratch, budget) : Truth::kTrue;
    if (truth == Truth::kTrue) decision.matched.push_back(r);
    if (truth == Truth::kError) failed_rule = r;
    return truth != Truth::kError;
  });
  if (failed_rule >= 0) return RuleError(rule_set, failed_rule, frame, budget, fallback_columns);
  selector.Select(decision.matched, decision.selected, decision.violation);
  return std::nullopt;
}

Result<Decision> CompiledRuleSet::Evaluate(const Snapshot& snapshot, const EvaluationOptions& options) const {
  expr::Budget budget(options.budget);
  auto applies = AppliesTo(snapshot, options.param_overrides, &budget);
  if (!applies.ok()) return applies.error();
  if (!*applies) {
    Decision decision;
    decision.applies = false;
    return decision;
  }
  auto frame = DeriveFacts(snapshot, options.param_overrides, &budget);
  if (!frame.ok()) return frame.error();
  return Match(*frame, options.trace, &budget);
}

}  // namespace ruleplane
