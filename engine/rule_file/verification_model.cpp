#include "engine/rule_file/verification_model.h"

#include <algorithm>
#include <string>

namespace ruleplane {
namespace {

using Role = VerificationModel::Role;

class Analyzer {
 public:
  explicit Analyzer(const RuleSet& rule_set)
      : rule_set_(rule_set),
        layout_{static_cast<int>(rule_set.facts.size()), static_cast<int>(rule_set.params.size())} {}

  VerificationModel Run() {
    const int fact_count = layout_.fact_count;
    model_.roles.assign(fact_count, Role::kUnavailable);
    model_.used.assign(fact_count, false);
    model_.only_column_cells.assign(fact_count, true);
    model_.opted_in = !rule_set_.constraints.empty() || !rule_set_.invariants.empty();
    for (const Fact& fact : rule_set_.facts) {
      if (fact.domain.kind != Domain::Kind::kNone) model_.opted_in = true;
    }
    AssignRoles();
    for (const Rule& rule : rule_set_.rules) {
      for (const Cell& cell : rule.cells) ReadCell(cell);
      if (rule.condition) Read(*rule.condition, "condition", false);
    }
    for (const Expression& constraint : rule_set_.constraints) Read(constraint, "constraint", false);
    for (const Expression& invariant : rule_set_.invariants) {
      Read(invariant, "invariant", true);
      if (invariant.program && Reads(*invariant.program, layout_.decision_steps_slot()))
        model_.steps_read = true;
    }
    if (model_.steps_read) ReadActions();
    CloseOverDependencies();
    std::stable_sort(model_.problems.begin(), model_.problems.end(),
                     [](const Diagnostic& a, const Diagnostic& b) {
                       return std::pair(a.position.line, a.position.column) <
                              std::pair(b.position.line, b.position.column);
                     });
    return std::move(model_);
  }

 private:
  static bool Reads(const expr::Program& program, int slot) {
    const std::vector<int>& slots = program.referenced_slots();
    return std::find(slots.begin(), slots.end(), slot) != slots.end();
  }

  bool IsFactSlot(int slot) const { return slot >= 0 && slot < layout_.fact_count; }

  void AssignRoles() {
    for (int f = 0; f < layout_.fact_count; ++f) {
      const Fact& fact = rule_set_.facts[f];
      bool computable = fact.expression.program != nullptr;
      bool reads_params_only = computable;  // and reads at least one param
      bool reads_param = false;
      if (computable) {
        for (const int slot : fact.expression.program->referenced_slots()) {
          if (slot == layout_.snapshot_slot() || slot == layout_.now_slot()) computable = false;
          if (IsFactSlot(slot) && model_.roles[slot] == Role::kUnavailable) computable = false;
          if (IsFactSlot(slot)) reads_params_only = false;
          if (slot >= layout_.param_slot(0) && slot < layout_.snapshot_slot()) reads_param = true;
        }
      }
      // A fact of params alone with a domain is enumerated: its domain says
      // which param values verification covers.
      const bool has_domain = fact.domain.kind != Domain::Kind::kNone;
      if (computable && reads_params_only && reads_param && has_domain) computable = false;
      if (computable) {
        model_.roles[f] = Role::kDerived;
      } else if (fact.domain.kind != Domain::Kind::kNone) {
        model_.roles[f] = Role::kInput;
      }
    }
  }

  // Why verification cannot evaluate `program`, or "".
  std::string Obstacle(const expr::Program& program, bool decision) const {
    for (const int slot : program.referenced_slots()) {
      if (slot == layout_.snapshot_slot())
        return "it reads the snapshot; read it through a fact with a domain";
      if (slot == layout_.now_slot()) return "it reads 'now'; read it through a fact with a domain";
      if (IsFactSlot(slot) && model_.roles[slot] == Role::kUnavailable) {
        return "fact '" + rule_set_.facts[slot].name +
               "' has no domain and is not computed from facts that have one";
      }
      if (slot >= layout_.fixed_slots() && !(decision && slot < layout_.invariant_fixed_slots())) {
        return "it reads a loop variable";
      }
    }
    return "";
  }

  void Problem(const SourcePosition& position, const std::string& what, const std::string& obstacle) {
    SourcePosition where = position;
    if (where.file.empty()) where.file = rule_set_.file;
    model_.problems.push_back(
        {Diagnostic::Severity::kWarning, where, "verify cannot evaluate this " + what + ": " + obstacle});
  }

  // Marks the facts `program` reads as used and read outside their column.
  void MarkRead(const expr::Program& program) {
    for (const int slot : program.referenced_slots()) {
      if (!IsFactSlot(slot)) continue;
      model_.used[slot] = true;
      model_.only_column_cells[slot] = false;
    }
  }

  void Read(const Expression& expression, const std::string& what, bool decision) {
    if (!expression.program) return;
    MarkRead(*expression.program);
    const std::string obstacle = Obstacle(*expression.program, decision);
    if (!obstacle.empty()) Problem(expression.position, what, obstacle);
  }

  void ReadCell(const Cell& cell) {
    if (cell.fact < 0 || cell.fact >= layout_.fact_count) return;
    model_.used[cell.fact] = true;
    std::string obstacle;
    if (model_.roles[cell.fact] == Role::kUnavailable) {
      obstacle = "fact '" + rule_set_.facts[cell.fact].name +
                 "' has no domain and is not computed from facts that have one";
    }
    for (const std::optional<Expression>* operand : {&cell.operand, &cell.low, &cell.high}) {
      if (!*operand || !(*operand)->program) continue;
      const expr::Program& program = *(*operand)->program;
      if (cell.kind == Cell::Kind::kExpression) {
        MarkRead(program);
      } else {
        // The column's fact is compared with the operand; other facts it reads are read outside their column.
        for (const int slot : program.referenced_slots()) {
          if (!IsFactSlot(slot)) continue;
          model_.used[slot] = true;
          model_.only_column_cells[slot] = false;
        }
      }
      if (obstacle.empty()) obstacle = Obstacle(program, false);
    }
    if (!obstacle.empty()) Problem(cell.position, "cell", obstacle);
  }

  // With `steps` read by an invariant: action targets and params that verification can evaluate.
  void ReadActions() {
    for (const Rule& rule : rule_set_.rules) {
      for (const ActionSpec& action : rule.then) {
        auto read = [&](const std::optional<Expression>& expression) {
          if (expression && expression->program && CanEvaluate(*expression->program)) {
            MarkRead(*expression->program);
          }
        };
        read(action.target);
        for (const ActionParam& param : action.params) read(param.value);
      }
    }
  }

  bool CanEvaluate(const expr::Program& program) const { return Obstacle(program, false).empty(); }

  // Facts that used derived facts and domain bounds read are used too.
  void CloseOverDependencies() {
    for (int f = layout_.fact_count - 1; f >= 0; --f) {
      if (!model_.used[f]) continue;
      const Fact& fact = rule_set_.facts[f];
      if (model_.roles[f] == Role::kDerived && fact.expression.program) {
        MarkRead(*fact.expression.program);
      } else if (model_.roles[f] == Role::kInput) {
        for (const std::optional<Expression>* bound : {&fact.domain.low, &fact.domain.high}) {
          if (!*bound || !(*bound)->program) continue;
          MarkRead(*(*bound)->program);
          const std::string obstacle = Obstacle(*(*bound)->program, false);
          if (!obstacle.empty()) Problem((*bound)->position, "domain bound", obstacle);
        }
      }
    }
  }

  const RuleSet& rule_set_;
  FrameLayout layout_;
  VerificationModel model_;
};

}  // namespace

bool VerificationModel::CanEvaluate(const expr::Program& program, const FrameLayout& layout,
                                    bool decision) const {
  for (const int slot : program.referenced_slots()) {
    if (slot == layout.snapshot_slot() || slot == layout.now_slot()) return false;
    if (slot >= 0 && slot < layout.fact_count && roles[slot] == Role::kUnavailable) return false;
    if (slot >= layout.fixed_slots() && !(decision && slot < layout.invariant_fixed_slots())) return false;
  }
  return true;
}

VerificationModel AnalyzeForVerification(const RuleSet& rule_set) { return Analyzer(rule_set).Run(); }

}  // namespace ruleplane
