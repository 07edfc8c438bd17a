#include "engine/verify/domain_enumerator.h"

#include <algorithm>
#include <climits>
#include <map>
#include <unordered_map>
#include <utility>

#include "engine/common/bitset.h"
#include "engine/match/cell_predicate.h"
#include "engine/match/hit_policy.h"
#include "engine/rule_file/verification_model.h"

namespace ruleplane {
namespace {

constexpr int64_t kMaxDomainSize = 100000;

uint64_t SaturatingMultiply(uint64_t a, uint64_t b) {
  uint64_t product;
  return __builtin_mul_overflow(a, b, &product) ? UINT64_MAX : product;
}

uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  uint64_t sum;
  return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

// One action of a rule, as invariants see it in `steps`: the target and
// params that need no snapshot and no loop variable.
struct StepSkeleton {
  std::string rule;
  std::string action;
  bool for_each = false;
  const expr::Program* target = nullptr;
  std::vector<std::pair<std::string, const expr::Program*>> params;
};

struct TableData {
  std::shared_ptr<const CompiledRuleSet> compiled;
  const RuleSet* rule_set = nullptr;
  FrameLayout layout;
  VerificationModel model;
  expr::Frame base_frame;                                  // params set, everything else unassigned
  std::vector<std::vector<CellPredicate>> cells;           // per rule, its non-"-" cells
  std::vector<std::vector<const CellPredicate*>> columns;  // per fact, the cells of its column
  std::vector<std::vector<StepSkeleton>> steps;            // per rule
  std::unique_ptr<HitPolicySelector> selector;
  std::vector<int> fact_var;   // per fact: its variable, or -1
  std::vector<int> rule_rank;  // per rule: place in hit-policy order
};

struct Variable {
  std::string name;
  bool input = false;
  std::vector<int> fact;  // per table: the fact, or -1 when the table does not use it
  std::vector<int> deps;  // variables it is computed from or bounded by
  int key = INT_MAX;      // earliest reader: -1 constraints, else rule rank; smaller is assigned first
};

Value Unassigned() {
  static const Value unassigned = Value::Error("not enumerated");
  return unassigned;
}

}  // namespace

struct DomainEnumerator::Impl {
  std::vector<TableData> tables;
  std::vector<Variable> vars;
  std::vector<std::string> names;
  std::vector<bool> inputs;
  std::vector<std::optional<std::vector<Value>>> full_domains;
  std::vector<int> order;     // position -> variable
  std::vector<int> position;  // variable -> position
  std::vector<bool> needed;   // another variable is computed from or bounded by it
  // A domain bound reads it, directly or through derived variables: counting
  // the states of a region must assign it.
  std::vector<bool> bounds_read;
  std::vector<std::vector<int>> derived_readers;  // per variable: derived variables computed from it
  // Per variable: the constraints (table, constraint) that read it, directly or through derived variables.
  std::vector<std::vector<std::pair<int, int>>> constraint_reach;
  // Per table, per constraint: the variables whose constraint_reach holds it.
  std::vector<std::vector<std::vector<int>>> constraint_reach_vars;
  std::vector<bool> collapsible;
  // Per position, per table: the rules / constraints that read the variable assigned there.
  std::vector<std::vector<std::vector<int>>> rules_at, constraints_at;
  // Per position, per table: rules_at as a bitset.
  std::vector<std::vector<std::vector<uint64_t>>> readers_at;
  // Per table, per constraint: the variables it reads.
  std::vector<std::vector<std::vector<int>>> constraint_vars;
  std::vector<bool> invariant_read;  // per variable: an invariant (or a step it sees) reads it

  std::vector<int> VarsRead(int table, const expr::Program& program) const {
    std::vector<int> read;
    const TableData& data = tables[table];
    for (const int slot : program.referenced_slots()) {
      if (slot >= 0 && slot < data.layout.fact_count && data.fact_var[slot] >= 0)
        read.push_back(data.fact_var[slot]);
    }
    return read;
  }

  std::vector<int> RuleReads(int table, int rule) const {
    std::vector<int> read;
    const TableData& data = tables[table];
    for (const CellPredicate& cell : data.cells[rule]) {
      if (data.fact_var[cell.fact_slot()] >= 0) read.push_back(data.fact_var[cell.fact_slot()]);
      for (const std::optional<Expression>* operand :
           {&cell.cell().operand, &cell.cell().low, &cell.cell().high}) {
        if (*operand && (*operand)->program) {
          for (const int v : VarsRead(table, *(*operand)->program)) read.push_back(v);
        }
      }
    }
    const Rule& source = data.rule_set->rules[rule];
    if (source.condition && source.condition->program) {
      for (const int v : VarsRead(table, *source.condition->program)) read.push_back(v);
    }
    return read;
  }

  Result<bool> Build();
  void BuildVariables();
  Result<bool> BuildOrder();
  void BuildPositions();
};

namespace {

Result<TableData> MakeTable(const DomainEnumerator::Table& table) {
  TableData data;
  data.compiled = table.compiled;
  data.rule_set = &table.compiled->rule_set();
  const RuleSet& rule_set = *data.rule_set;
  data.layout = table.compiled->layout();
  data.model = AnalyzeForVerification(rule_set);
  if (!data.model.problems.empty()) {
    return Error{
        ErrorCode::kInvalidArgument,
        "rule set '" + rule_set.id() + "' cannot be verified: " + data.model.problems.front().message,
        data.model.problems.front().position};
  }
  int frame_size = std::max(table.compiled->frame_size(), data.layout.invariant_fixed_slots());
  for (const Expression& invariant : rule_set.invariants) {
    if (invariant.program) frame_size = std::max(frame_size, invariant.program->frame_size());
  }
  data.base_frame.assign(frame_size, Unassigned());
  for (int p = 0; p < data.layout.param_count; ++p) {
    const Param& param = rule_set.params[p];
    Result<Value> value = ConvertParam(param, param.default_value);
    for (const auto& [name, given] : table.overrides) {
      if (name == param.name) value = ConvertParam(param, given);
    }
    if (!value.ok()) return value.error();
    data.base_frame[data.layout.param_slot(p)] = *value;
  }

  std::vector<std::string> slot_names;
  for (const Fact& fact : rule_set.facts) slot_names.push_back(fact.name);
  for (const Param& param : rule_set.params) slot_names.push_back(param.name);
  slot_names.push_back("snapshot");
  slot_names.push_back("now");
  const int rule_count = static_cast<int>(rule_set.rules.size());
  data.cells.resize(rule_count);
  data.columns.resize(rule_set.facts.size());
  data.steps.resize(rule_count);
  for (int r = 0; r < rule_count; ++r) {
    const Rule& rule = rule_set.rules[r];
    for (int c = 0; c < static_cast<int>(rule.cells.size()); ++c) {
      if (rule.cells[c].kind == Cell::Kind::kAny) continue;
      auto predicate = CellPredicate::Compile(rule_set, r, c, slot_names);
      if (!predicate.ok()) return predicate.error();
      data.cells[r].push_back(std::move(predicate).value());
    }
    for (const ActionSpec& action : rule.then) {
      StepSkeleton step{rule.id, action.action, action.for_each.has_value(), nullptr, {}};
      auto evaluable = [&](const Expression& expression) {
        return expression.program && data.model.CanEvaluate(*expression.program, data.layout, false);
      };
      if (action.target && evaluable(*action.target)) step.target = action.target->program.get();
      for (const ActionParam& param : action.params) {
        if (evaluable(param.value)) step.params.emplace_back(param.name, param.value.program.get());
      }
      data.steps[r].push_back(std::move(step));
    }
  }
  for (auto& rule_cells : data.cells) {
    for (const CellPredicate& cell : rule_cells) data.columns[cell.fact_slot()].push_back(&cell);
  }
  data.selector = std::make_unique<HitPolicySelector>(rule_set);
  std::vector<int> by_rank(rule_count);
  for (int r = 0; r < rule_count; ++r) by_rank[r] = r;
  if (rule_set.hit_policy == HitPolicy::kPriority) {
    std::stable_sort(by_rank.begin(), by_rank.end(),
                     [&](int a, int b) { return rule_set.rules[a].priority > rule_set.rules[b].priority; });
  }
  data.rule_rank.resize(rule_count);
  for (int i = 0; i < rule_count; ++i) data.rule_rank[by_rank[i]] = i;
  data.fact_var.assign(rule_set.facts.size(), -1);
  return data;
}

}  // namespace

void DomainEnumerator::Impl::BuildVariables() {
  std::map<std::string, int> by_name;
  for (int t = 0; t < static_cast<int>(tables.size()); ++t) {
    TableData& data = tables[t];
    for (int f = 0; f < data.layout.fact_count; ++f) {
      if (!data.model.used[f]) continue;
      const std::string& name = data.rule_set->facts[f].name;
      auto [it, inserted] = by_name.emplace(name, static_cast<int>(vars.size()));
      if (inserted) {
        vars.push_back(Variable{name, false, std::vector<int>(tables.size(), -1), {}, INT_MAX});
      }
      Variable& var = vars[it->second];
      var.fact[t] = f;
      data.fact_var[f] = it->second;
      if (data.model.roles[f] == VerificationModel::Role::kInput) var.input = true;
    }
  }
  for (Variable& var : vars) {
    for (int t = 0; t < static_cast<int>(tables.size()); ++t) {
      const int f = var.fact[t];
      if (f < 0) continue;
      const TableData& data = tables[t];
      const Fact& fact = data.rule_set->facts[f];
      if (data.model.roles[f] == VerificationModel::Role::kInput) {
        for (const std::optional<Expression>* bound : {&fact.domain.low, &fact.domain.high}) {
          if (*bound && (*bound)->program) {
            for (const int v : VarsRead(t, *(*bound)->program)) var.deps.push_back(v);
          }
        }
      } else if (!var.input && fact.expression.program) {
        for (const int v : VarsRead(t, *fact.expression.program)) var.deps.push_back(v);
      }
    }
  }
  for (const Variable& var : vars) {
    names.push_back(var.name);
    inputs.push_back(var.input);
    std::optional<std::vector<Value>> full;
    bool constant = var.input;
    for (int t = 0; t < static_cast<int>(tables.size()) && constant; ++t) {
      if (var.fact[t] < 0 || tables[t].model.roles[var.fact[t]] != VerificationModel::Role::kInput) continue;
      const Domain& domain = tables[t].rule_set->facts[var.fact[t]].domain;
      std::vector<Value> values;
      if (domain.kind == Domain::Kind::kBool) {
        values = {Value::Bool(false), Value::Bool(true)};
      } else if (domain.kind == Domain::Kind::kEnum) {
        values = domain.enum_values;
      } else if (domain.kind == Domain::Kind::kInt && domain.low->program->constant() &&
                 domain.high->program->constant()) {
        const int64_t low = domain.low->program->constant()->int_value();
        const int64_t high = domain.high->program->constant()->int_value();
        if (high - low > kMaxDomainSize) {
          constant = false;
          continue;
        }
        for (int64_t i = low; i <= high; ++i) values.push_back(Value::Int(i));
      } else {
        constant = false;
        continue;
      }
      if (!full) {
        full = std::move(values);
      } else {
        std::vector<Value> both;
        for (const Value& value : *full) {
          if (std::find(values.begin(), values.end(), value) != values.end()) both.push_back(value);
        }
        full = std::move(both);
      }
    }
    full_domains.push_back(constant ? full : std::nullopt);
  }
}

Result<bool> DomainEnumerator::Impl::BuildOrder() {
  const int table_count = static_cast<int>(tables.size());
  for (int t = 0; t < table_count; ++t) {
    const TableData& data = tables[t];
    const RuleSet& rule_set = *data.rule_set;
    const int rule_count = static_cast<int>(rule_set.rules.size());
    auto lower = [&](int var, int key) { vars[var].key = std::min(vars[var].key, key); };
    for (const Expression& constraint : rule_set.constraints) {
      for (const int v : VarsRead(t, *constraint.program)) lower(v, -1);
    }
    for (int r = 0; r < rule_count; ++r) {
      for (const int v : RuleReads(t, r)) lower(v, data.rule_rank[r]);
    }
    for (const Expression& invariant : rule_set.invariants) {
      for (const int v : VarsRead(t, *invariant.program)) lower(v, rule_count);
    }
    for (const auto& rule_steps : data.steps) {
      for (const StepSkeleton& step : rule_steps) {
        if (step.target) {
          for (const int v : VarsRead(t, *step.target)) lower(v, rule_count);
        }
        for (const auto& [name, program] : step.params) {
          for (const int v : VarsRead(t, *program)) lower(v, rule_count);
        }
      }
    }
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (const Variable& var : vars) {
      for (const int dep : var.deps) {
        if (vars[dep].key > var.key) {
          vars[dep].key = var.key;
          changed = true;
        }
      }
    }
  }
  const int count = static_cast<int>(vars.size());
  position.assign(count, -1);
  while (static_cast<int>(order.size()) < count) {
    int best = -1;
    for (int v = 0; v < count; ++v) {
      if (position[v] >= 0) continue;
      bool available = true;
      for (const int dep : vars[v].deps) available = available && position[dep] >= 0;
      if (!available) continue;
      if (!vars[v].input) {  // derived: costs nothing, decides rules early
        best = v;
        break;
      }
      if (best < 0 || vars[v].key < vars[best].key) best = v;
    }
    if (best < 0) {
      return Error{
          ErrorCode::kInvalidArgument,
          "the rule sets order their facts inconsistently (a domain bound or derivation reads a fact "
          "that the other rule set computes from it)",
          {}};
    }
    position[best] = static_cast<int>(order.size());
    order.push_back(best);
  }
  return true;
}

void DomainEnumerator::Impl::BuildPositions() {
  const int count = static_cast<int>(vars.size());
  const int table_count = static_cast<int>(tables.size());
  needed.assign(count, false);
  derived_readers.assign(count, {});
  bounds_read.assign(count, false);
  for (int v = 0; v < count; ++v) {
    for (const int dep : vars[v].deps) {
      needed[dep] = true;
      if (vars[v].input) bounds_read[dep] = true;
      if (!vars[v].input) derived_readers[dep].push_back(v);
    }
  }
  // Backwards along the order: a derived variable that a bound reads passes it on to its own dependencies.
  for (int p = count - 1; p >= 0; --p) {
    const int v = order[p];
    if (!bounds_read[v] || vars[v].input) continue;
    for (const int dep : vars[v].deps) bounds_read[dep] = true;
  }
  collapsible.assign(count, false);
  for (int v = 0; v < count; ++v) {
    if (!vars[v].input || needed[v]) continue;
    bool ok = true;
    for (int t = 0; t < table_count && ok; ++t) {
      const int f = vars[v].fact[t];
      if (f < 0) continue;
      const TableData& data = tables[t];
      if (!data.model.only_column_cells[f] || data.model.roles[f] != VerificationModel::Role::kInput) {
        ok = false;
        break;
      }
      for (const CellPredicate* cell : data.columns[f]) {
        for (const std::optional<Expression>* operand :
             {&cell->cell().operand, &cell->cell().low, &cell->cell().high}) {
          if (!*operand || !(*operand)->program) continue;
          for (const int slot : (*operand)->program->referenced_slots()) {
            const bool param = slot >= data.layout.param_slot(0) && slot < data.layout.snapshot_slot();
            const bool earlier = slot < data.layout.fact_count && data.fact_var[slot] >= 0 &&
                                 position[data.fact_var[slot]] < position[v];
            if (!param && !earlier) ok = false;
          }
        }
      }
    }
    collapsible[v] = ok;
  }
  invariant_read.assign(count, false);
  for (int t = 0; t < table_count; ++t) {
    for (const Expression& invariant : tables[t].rule_set->invariants) {
      for (const int v : VarsRead(t, *invariant.program)) invariant_read[v] = true;
    }
    for (const auto& rule_steps : tables[t].steps) {
      for (const StepSkeleton& step : rule_steps) {
        if (step.target) {
          for (const int v : VarsRead(t, *step.target)) invariant_read[v] = true;
        }
        for (const auto& [name, program] : step.params) {
          for (const int v : VarsRead(t, *program)) invariant_read[v] = true;
        }
      }
    }
  }
  constraint_reach.assign(count, {});
  for (int t = 0; t < table_count; ++t) {
    const RuleSet& rule_set = *tables[t].rule_set;
    for (int c = 0; c < static_cast<int>(rule_set.constraints.size()); ++c) {
      for (const int v : VarsRead(t, *rule_set.constraints[c].program))
        constraint_reach[v].emplace_back(t, c);
    }
  }
  for (int p = count - 1; p >= 0; --p) {
    const int v = order[p];
    for (const int derived : derived_readers[v]) {
      for (const auto& reader : constraint_reach[derived]) constraint_reach[v].push_back(reader);
    }
  }
  constraint_reach_vars.assign(table_count, {});
  for (int t = 0; t < table_count; ++t)
    constraint_reach_vars[t].resize(tables[t].rule_set->constraints.size());
  for (const int v : order) {
    for (const auto& [t, c] : constraint_reach[v]) constraint_reach_vars[t][c].push_back(v);
  }
  rules_at.assign(count, std::vector<std::vector<int>>(table_count));
  constraints_at.assign(count, std::vector<std::vector<int>>(table_count));
  constraint_vars.assign(table_count, {});
  for (int t = 0; t < table_count; ++t) {
    const RuleSet& rule_set = *tables[t].rule_set;
    for (int r = 0; r < static_cast<int>(rule_set.rules.size()); ++r) {
      std::vector<int> read = RuleReads(t, r);
      std::sort(read.begin(), read.end());
      read.erase(std::unique(read.begin(), read.end()), read.end());
      for (const int v : read) rules_at[position[v]][t].push_back(r);
    }
    for (int c = 0; c < static_cast<int>(rule_set.constraints.size()); ++c) {
      std::vector<int> read = VarsRead(t, *rule_set.constraints[c].program);
      std::sort(read.begin(), read.end());
      read.erase(std::unique(read.begin(), read.end()), read.end());
      for (const int v : read) constraints_at[position[v]][t].push_back(c);
      constraint_vars[t].push_back(read);
    }
  }
  readers_at.assign(count, std::vector<std::vector<uint64_t>>(table_count));
  for (int p = 0; p < count; ++p) {
    for (int t = 0; t < table_count; ++t) {
      readers_at[p][t].assign(bitset::WordCount(static_cast<int>(tables[t].rule_set->rules.size())), 0);
      for (const int r : rules_at[p][t]) bitset::Set(readers_at[p][t].data(), r);
    }
  }
}

Result<bool> DomainEnumerator::Impl::Build() {
  BuildVariables();
  auto ordered = BuildOrder();
  if (!ordered.ok()) return ordered.error();
  BuildPositions();
  return true;
}

namespace {

// What the walk computes at one node. It depends only on the path to the
// node (per position, the class assigned or that it was skipped), never on
// the run's options, so runs can share it through an EnumerationCache.
struct WalkNode {
  std::vector<RuleStatuses> rules;             // per table
  std::vector<std::vector<uint64_t>> unknown;  // per table, when cached: bitset of the rules still kUnknown
  std::optional<std::vector<TablePoint>> decided;          // per table: `rules` and the decision they make
  std::optional<std::vector<TablePoint>> matched;          // per table: by the matcher, at a full fact vector
  std::optional<std::vector<std::vector<Value>>> classes;  // of the input variable at this position
  bool cached = false;
};

}  // namespace

struct EnumerationCache::Impl {
  static constexpr size_t kMaxBytes = size_t{64} << 20;
  static constexpr size_t kTrialNodes = 4096;
  static constexpr size_t kMinRules = 64;
  const DomainEnumerator::Impl* enumerator = nullptr;
  std::unordered_map<std::string, WalkNode> nodes;  // by path
  size_t bytes = 0;
  size_t hits = 0;
  bool keeping = true;

  // Whether `more` bytes fit; counts them when they do.
  bool Keep(size_t more) {
    if (bytes + more > kMaxBytes) return false;
    bytes += more;
    return true;
  }

  // Whether a new node of `more` bytes is kept: not once the runs turn out
  // not to share their paths (runs that each split on other facts); then
  // the cache is not even looked at.
  bool KeepNode(size_t more) {
    if (nodes.size() >= kTrialNodes && hits < nodes.size()) keeping = false;
    return keeping && Keep(more);
  }
};

EnumerationCache::EnumerationCache() : impl_(std::make_unique<Impl>()) {}
EnumerationCache::~EnumerationCache() = default;

namespace {

size_t PointsBytes(const std::vector<TablePoint>& points) {
  size_t bytes = 0;
  for (const TablePoint& point : points) {
    const TableDecision& decision = point.decision;
    bytes += sizeof(TablePoint) + point.rules.size() +
             (decision.matched.size() + decision.selected.size()) * sizeof(int) + decision.error.size();
  }
  return bytes;
}

// One walk over the domain.
class Walker {
 public:
  Walker(const DomainEnumerator::Impl& impl, const EnumerationOptions& options,
         const std::function<void(const EnumeratedRegion&)>& visit)
      : impl_(impl), options_(options), visit_(visit) {
    for (const TableData& table : impl.tables) frames_.push_back(table.base_frame);
    axes_.assign(impl.vars.size(), RegionAxis::Any());
    example_.assign(impl.vars.size(), Value());
    assigned_.assign(impl.vars.size(), false);
    if (options.interesting_rules.empty()) {
      for (const TableData& table : impl.tables) {
        const int rule_count = static_cast<int>(table.rule_set->rules.size());
        every_rule_.emplace_back(bitset::WordCount(rule_count));
        bitset::SetFirst(every_rule_.back().data(), static_cast<int>(every_rule_.back().size()), rule_count);
      }
    }
    // A table of few rules computes a node faster than it finds it in a cache.
    size_t rule_count = 0;
    for (const TableData& table : impl.tables) rule_count += table.rule_set->rules.size();
    if (options.cache != nullptr && rule_count >= EnumerationCache::Impl::kMinRules) {
      cache_ = &options.cache->impl();
      if (cache_->enumerator != &impl) {
        cache_->nodes.clear();
        cache_->bytes = cache_->hits = 0;
        cache_->keeping = true;
        cache_->enumerator = &impl;
      }
    }
  }

  EnumerationStats Run() {
    const int table_count = static_cast<int>(impl_.tables.size());
    std::vector<std::vector<Tri>> constraints(table_count);
    for (int t = 0; t < table_count; ++t) {
      const RuleSet& rule_set = *impl_.tables[t].rule_set;
      constraints[t].resize(rule_set.constraints.size());
      for (int c = 0; c < static_cast<int>(rule_set.constraints.size()); ++c) {
        std::string error;
        constraints[t][c] = EvaluateConstraint(t, c, error);
        if (constraints[t][c] == Tri::kFalse) return stats_;
        if (!error.empty()) {
          ReportError(1, error);
          return stats_;
        }
      }
    }
    WalkNode local;
    WalkNode& root = NodeAt(local, [&](std::vector<RuleStatuses>& rules) {
      for (int t = 0; t < table_count; ++t) {
        std::vector<Tri> statuses(impl_.tables[t].rule_set->rules.size());
        for (int r = 0; r < static_cast<int>(statuses.size()); ++r) statuses[r] = EvaluateRule(t, r);
        rules.emplace_back(std::move(statuses));
      }
    });
    Walk(0, root, constraints, 1);
    return stats_;
  }

 private:
  int end() const { return static_cast<int>(impl_.order.size()); }

  void Assign(int var, const Value& value) {
    const Variable& variable = impl_.vars[var];
    for (size_t t = 0; t < frames_.size(); ++t) {
      if (variable.fact[t] >= 0) frames_[t][variable.fact[t]] = value;
    }
    example_[var] = value;
    assigned_[var] = true;
  }

  void Unassign(int var) {
    const Variable& variable = impl_.vars[var];
    for (size_t t = 0; t < frames_.size(); ++t) {
      if (variable.fact[t] >= 0) frames_[t][variable.fact[t]] = Unassigned();
    }
    example_[var] = Value();
    axes_[var] = RegionAxis::Any();
    assigned_[var] = false;
  }

  // Whether the variable's value can change anything still open: an
  // undecided rule the triage cares about, an undecided constraint, an
  // invariant, directly or through a derived variable; a variable that a
  // domain bound reads always can.
  bool Relevant(int var, const WalkNode& node, const std::vector<std::vector<Tri>>& constraints) const {
    if (impl_.bounds_read[var] || (options_.invariants && impl_.invariant_read[var])) return true;
    const int position = impl_.position[var];
    for (size_t t = 0; t < node.rules.size(); ++t) {
      for (const int c : impl_.constraints_at[position][t]) {
        if (options_.split_on_constraints && constraints[t][c] == Tri::kUnknown) return true;
      }
      const bool every = options_.interesting_rules.empty();
      const std::vector<uint64_t>& interesting = every ? every_rule_[t] : options_.interesting_rules[t];
      if (node.unknown.empty()) {
        const RuleStatuses& rules = node.rules[t];
        for (const int r : impl_.rules_at[position][t]) {
          if (rules[r] == Tri::kUnknown && (every || bitset::Test(interesting.data(), r))) return true;
        }
        continue;
      }
      const std::vector<uint64_t>& readers = impl_.readers_at[position][t];
      const std::vector<uint64_t>& unknown = node.unknown[t];
      for (size_t w = 0; w < readers.size(); ++w) {
        if ((readers[w] & unknown[w] & interesting[w]) != 0) return true;
      }
    }
    for (const int derived : impl_.derived_readers[var]) {
      if (Relevant(derived, node, constraints)) return true;
    }
    return false;
  }

  // Computes a derived variable in every table that uses it; "" or the error.
  std::string Derive(int var) {
    const Variable& variable = impl_.vars[var];
    std::string error;
    bool first = true;
    for (size_t t = 0; t < frames_.size(); ++t) {
      const int f = variable.fact[t];
      if (f < 0) continue;
      const Fact& fact = impl_.tables[t].rule_set->facts[f];
      Value value = fact.expression.program->Evaluate(frames_[t]);
      if (value.is_error() && error.empty()) {
        error = "fact '" + fact.name + "' cannot be computed: " + value.error_message();
      }
      if (first) example_[var] = value;
      first = false;
      frames_[t][f] = std::move(value);
    }
    assigned_[var] = true;
    return error;
  }

  // The values of an input variable given the assigned ones: its domain,
  // intersected across the tables that enumerate it.
  Result<std::vector<Value>> Values(int var) {
    const Variable& variable = impl_.vars[var];
    std::optional<std::vector<Value>> result;
    for (size_t t = 0; t < frames_.size(); ++t) {
      const int f = variable.fact[t];
      if (f < 0 || impl_.tables[t].model.roles[f] != VerificationModel::Role::kInput) continue;
      const Fact& fact = impl_.tables[t].rule_set->facts[f];
      std::vector<Value> values;
      switch (fact.domain.kind) {
        case Domain::Kind::kBool:
          values = {Value::Bool(false), Value::Bool(true)};
          break;
        case Domain::Kind::kEnum:
          values = fact.domain.enum_values;
          break;
        case Domain::Kind::kInt: {
          const Value low = fact.domain.low->program->Evaluate(frames_[t]);
          const Value high = fact.domain.high->program->Evaluate(frames_[t]);
          for (const Value* bound : {&low, &high}) {
            if (!bound->is_int()) {
              return Error{ErrorCode::kEvaluation,
                           "the domain bound of fact '" + fact.name + "' is not an int: " +
                               (bound->is_error() ? bound->error_message() : bound->DebugString()),
                           fact.domain.position};
            }
          }
          if (high.int_value() - low.int_value() > kMaxDomainSize) {
            return Error{ErrorCode::kInvalidArgument,
                         "the domain of fact '" + fact.name + "' has more than " +
                             std::to_string(kMaxDomainSize) + " values",
                         fact.domain.position};
          }
          for (int64_t i = low.int_value(); i <= high.int_value(); ++i) values.push_back(Value::Int(i));
          break;
        }
        case Domain::Kind::kNone:
          break;
      }
      if (!result) {
        result = std::move(values);
      } else {
        std::vector<Value> both;
        for (const Value& value : *result) {
          if (std::find(values.begin(), values.end(), value) != values.end()) both.push_back(value);
        }
        result = std::move(both);
      }
    }
    return result.value_or(std::vector<Value>{});
  }

  // Values grouped into classes that every cell of the variable's column
  // treats alike, in the order of their first value.
  const std::vector<std::vector<Value>>& Classes(int var, const std::vector<Value>& values, WalkNode& node,
                                                 std::vector<std::vector<Value>>& local) {
    if (node.classes) return *node.classes;
    local = ComputeClasses(var, values);
    size_t bytes = local.size() * sizeof(local[0]);
    for (const std::vector<Value>& values_of_class : local) bytes += values_of_class.size() * sizeof(Value);
    if (!node.cached || !cache_->Keep(bytes)) return local;
    node.classes = std::move(local);
    return *node.classes;
  }

  std::vector<std::vector<Value>> ComputeClasses(int var, const std::vector<Value>& values) {
    if (!impl_.collapsible[var]) {
      std::vector<std::vector<Value>> singletons;
      for (const Value& value : values) singletons.push_back({value});
      return singletons;
    }
    const Variable& variable = impl_.vars[var];
    std::map<std::string, int> class_of;
    std::vector<std::vector<Value>> classes;
    for (const Value& value : values) {
      Assign(var, value);
      std::string signature;
      for (size_t t = 0; t < frames_.size(); ++t) {
        if (variable.fact[t] < 0) continue;
        for (const CellPredicate* cell : impl_.tables[t].columns[variable.fact[t]]) {
          Value error;
          signature += static_cast<char>('0' + static_cast<int>(cell->Check(value, frames_[t], error)));
        }
      }
      auto [it, inserted] = class_of.emplace(signature, static_cast<int>(classes.size()));
      if (inserted) classes.emplace_back();
      classes[it->second].push_back(value);
    }
    Unassign(var);
    return classes;
  }

  Tri EvaluateRule(int table, int rule) {
    ++stats_.rule_evaluations;
    const TableData& data = impl_.tables[table];
    expr::Frame& frame = frames_[table];
    bool unknown = false;
    for (const CellPredicate& cell : data.cells[rule]) {
      Value error;
      switch (cell.Check(frame[cell.fact_slot()], frame, error)) {
        case CellPredicate::Truth::kFalse:
          return Tri::kFalse;
        case CellPredicate::Truth::kTrue:
          break;
        case CellPredicate::Truth::kError:
          unknown = true;
          break;
      }
    }
    const Rule& source = data.rule_set->rules[rule];
    if (source.condition) {
      const Value result = source.condition->program->Evaluate(frame);
      if (result.is_bool() && !result.bool_value()) return Tri::kFalse;
      if (!result.is_bool()) unknown = true;
    }
    return unknown ? Tri::kUnknown : Tri::kTrue;
  }

  // An error once everything the constraint reads is assigned is reported in `error`.
  Tri EvaluateConstraint(int table, int constraint, std::string& error) {
    const Expression& expression = impl_.tables[table].rule_set->constraints[constraint];
    const Value result = expression.program->Evaluate(frames_[table]);
    if (result.is_bool()) return result.bool_value() ? Tri::kTrue : Tri::kFalse;
    const std::vector<int>& read = impl_.constraint_vars[table][constraint];
    if (std::all_of(read.begin(), read.end(), [this](int var) { return assigned_[var]; })) {
      error = "constraint \"" + expression.text + "\" is not a bool: " +
              (result.is_error() ? result.error_message() : std::string(result.TypeName()));
    }
    return Tri::kUnknown;
  }

  TableDecision DecideFromStatuses(int table, const std::vector<Tri>& rules) const {
    const TableData& data = impl_.tables[table];
    const RuleSet& rule_set = *data.rule_set;
    TableDecision decision;
    decision.matched_known =
        std::none_of(rules.begin(), rules.end(), [](Tri s) { return s == Tri::kUnknown; });
    if (decision.matched_known) {
      for (int r = 0; r < static_cast<int>(rules.size()); ++r) {
        if (rules[r] == Tri::kTrue) decision.matched.push_back(r);
      }
      data.selector->Select(decision.matched, decision.selected, decision.violation);
      decision.known = true;
      return decision;
    }
    if (rule_set.hit_policy == HitPolicy::kFirst || rule_set.hit_policy == HitPolicy::kPriority) {
      int best = -1;
      for (int r = 0; r < static_cast<int>(rules.size()); ++r) {
        if (rules[r] == Tri::kFalse) continue;
        if (best < 0 || data.rule_rank[r] < data.rule_rank[best]) best = r;
      }
      if (best >= 0 && rules[best] == Tri::kTrue) {
        decision.known = true;
        decision.selected = {best};
      }
    }
    return decision;
  }

  // The decision as invariants see it, in the table's decision slots.
  void SetDecisionSlots(int table, const TableDecision& decision) {
    const TableData& data = impl_.tables[table];
    expr::Frame& frame = frames_[table];
    Value::List rule_ids, actions, steps;
    // A target or param that cannot be computed (yet) makes all of `steps`
    // that error: an error inside a map or list would not absorb as CEL's
    // && does (`{"replicas": error} == {"replicas": 0}` is false).
    Value error;
    auto evaluate = [&](const expr::Program& program) {
      Value value = program.Evaluate(frame);
      if (value.is_error() && error.is_null()) error = value;
      return value;
    };
    for (const int r : decision.selected) {
      rule_ids.push_back(Value::String(data.rule_set->rules[r].id));
      for (const StepSkeleton& step : data.steps[r]) {
        actions.push_back(Value::String(step.action));
        Value::Map params;
        for (const auto& [name, program] : step.params)
          params.emplace_back(Value::String(name), evaluate(*program));
        Value::Map entry = {{Value::String("rule"), Value::String(step.rule)},
                            {Value::String("action"), Value::String(step.action)},
                            {Value::String("forEach"), Value::Bool(step.for_each)}};
        if (step.target) entry.emplace_back(Value::String("target"), evaluate(*step.target));
        entry.emplace_back(Value::String("params"), Value::MakeMap(std::move(params)));
        steps.push_back(Value::MakeMap(std::move(entry)));
      }
    }
    frame[data.layout.decision_rules_slot()] = Value::MakeList(std::move(rule_ids));
    frame[data.layout.decision_actions_slot()] = Value::MakeList(std::move(actions));
    frame[data.layout.decision_steps_slot()] = error.is_null() ? Value::MakeList(std::move(steps)) : error;
  }

  // Evaluates the invariants of tables whose decision is known; whether all are decided.
  bool EvaluateInvariants(std::vector<TablePoint>& points, bool full) {
    bool decided = true;
    for (size_t t = 0; t < points.size(); ++t) {
      const RuleSet& rule_set = *impl_.tables[t].rule_set;
      TablePoint& point = points[t];
      point.invariants.assign(rule_set.invariants.size(), Tri::kUnknown);
      point.invariant_errors.assign(rule_set.invariants.size(), "");
      if (rule_set.invariants.empty()) continue;
      if (!point.decision.known || !point.decision.error.empty()) {
        decided = decided && !point.decision.error.empty();
        continue;
      }
      SetDecisionSlots(static_cast<int>(t), point.decision);
      for (size_t i = 0; i < rule_set.invariants.size(); ++i) {
        const Value result = rule_set.invariants[i].program->Evaluate(frames_[t]);
        if (result.is_bool()) {
          point.invariants[i] = result.bool_value() ? Tri::kTrue : Tri::kFalse;
          continue;
        }
        if (full) {
          point.invariant_errors[i] =
              result.is_error() ? result.error_message() : std::string("not a bool but ") + result.TypeName();
        } else {
          decided = false;
        }
      }
    }
    return decided;
  }

  // Whether counting must enumerate the values of an unassigned variable:
  // a domain bound or an undecided constraint reads it.
  bool MustEnumerate(int var, const std::vector<std::vector<Tri>>& constraints) const {
    if (impl_.bounds_read[var]) return true;
    for (const auto& [t, c] : impl_.constraint_reach[var]) {
      if (constraints[t][c] == Tri::kUnknown) return true;
    }
    return false;
  }

  // The unassigned variables that counting must enumerate, in independent
  // groups (linked by undecided constraints, domain bounds and derivations),
  // each in assignment order with the undecided constraints it decides; and
  // the other unassigned variables, each free within its domain.
  struct Component {
    std::vector<int> vars;
    std::vector<std::pair<int, int>> constraints;  // (table, constraint)
  };

  void SplitUnassigned(const std::vector<std::vector<Tri>>& constraints, std::vector<Component>& components,
                       std::vector<int>& free) {
    const int count = static_cast<int>(impl_.vars.size());
    std::vector<int> parent(count);
    for (int v = 0; v < count; ++v) parent[v] = v;
    auto find = [&](int v) {
      while (parent[v] != v) v = parent[v] = parent[parent[v]];
      return v;
    };
    auto join = [&](int a, int b) { parent[find(a)] = find(b); };
    std::vector<bool> member(count, false);
    for (const int var : impl_.order) {
      if (assigned_[var]) continue;
      bool enumerate = MustEnumerate(var, constraints);
      for (const int dep : impl_.vars[var].deps) {
        if (!assigned_[dep] && member[dep]) {
          enumerate = true;
          join(var, dep);
        }
      }
      member[var] = enumerate;
      if (!enumerate && impl_.vars[var].input) free.push_back(var);
    }
    std::vector<std::pair<int, int>> open;
    for (size_t t = 0; t < constraints.size(); ++t) {
      for (size_t c = 0; c < constraints[t].size(); ++c) {
        if (constraints[t][c] != Tri::kUnknown) continue;
        open.emplace_back(static_cast<int>(t), static_cast<int>(c));
        int previous = -1;
        for (const int var : impl_.constraint_reach_vars[t][c]) {
          if (!member[var]) continue;
          if (previous >= 0) join(previous, var);
          previous = var;
        }
      }
    }
    std::map<int, size_t> index;
    for (const int var : impl_.order) {
      if (!member[var]) continue;
      auto [it, inserted] = index.emplace(find(var), components.size());
      if (inserted) components.emplace_back();
      components[it->second].vars.push_back(var);
    }
    for (const auto& [t, c] : open) {
      int root = -1;
      for (const int var : impl_.constraint_reach_vars[t][c]) {
        if (member[var]) root = find(var);
      }
      if (root >= 0) components[index[root]].constraints.emplace_back(t, c);
    }
  }

  bool ConstraintsHold(const std::vector<std::pair<int, int>>& constraints) {
    for (const auto& [t, c] : constraints) {
      const Value result = impl_.tables[t].rule_set->constraints[c].program->Evaluate(frames_[t]);
      if (!result.is_bool() || !result.bool_value()) return false;
    }
    return true;
  }

  // Assignments of the component's variables from `i` on that satisfy its
  // constraints; with `first`, stops at (and keeps) the first one.
  uint64_t Enumerate(const Component& component, size_t i, bool first) {
    if (i == component.vars.size()) return ConstraintsHold(component.constraints) ? 1 : 0;
    const int var = component.vars[i];
    if (!impl_.vars[var].input) {
      Derive(var);
      const uint64_t count = Enumerate(component, i + 1, first);
      if (!(first && count > 0)) Unassign(var);
      return count;
    }
    auto values = Values(var);
    if (!values.ok()) return 0;
    uint64_t total = 0;
    for (const Value& value : *values) {
      Assign(var, value);
      total = SaturatingAdd(total, Enumerate(component, i + 1, first));
      if (first && total > 0) return total;
    }
    Unassign(var);
    return total;
  }

  // What a component's count depends on: its variables and the assigned
  // values its domains, derivations and constraints read.
  std::string ComponentKey(const Component& component) {
    std::string key;
    auto add = [&](int var) {
      key += std::to_string(var) + "=" + (assigned_[var] ? example_[var].DebugString() : "*") + "\x1f";
    };
    for (const int var : component.vars) {
      add(var);
      for (const int dep : impl_.vars[var].deps) add(dep);
    }
    for (const auto& [t, c] : component.constraints) {
      key += "c" + std::to_string(t) + "." + std::to_string(c);
      for (const int var : impl_.constraint_vars[t][c]) add(var);
    }
    return key;
  }

  // The fact vectors that complete the assigned variables: every
  // combination of the unassigned ones within their domains that satisfies
  // the undecided constraints.
  uint64_t CountStates(const std::vector<std::vector<Tri>>& constraints) {
    std::vector<Component> components;
    std::vector<int> free;
    SplitUnassigned(constraints, components, free);
    uint64_t total = 1;
    for (const int var : free) {
      auto values = Values(var);
      total = SaturatingMultiply(total, values.ok() ? values->size() : 0);
    }
    for (const Component& component : components) {
      if (total == 0) break;
      std::string key = ComponentKey(component);
      auto it = count_memo_.find(key);
      if (it == count_memo_.end())
        it = count_memo_.emplace(std::move(key), Enumerate(component, 0, false)).first;
      total = SaturatingMultiply(total, it->second);
    }
    return total;
  }

  // Assigns the unassigned variables one completion (CountStates > 0);
  // records them in `completed`.
  void Complete(const std::vector<std::vector<Tri>>& constraints, std::vector<int>& completed) {
    std::vector<Component> components;
    std::vector<int> free;
    SplitUnassigned(constraints, components, free);
    for (const Component& component : components) {
      Enumerate(component, 0, true);
      for (const int var : component.vars) {
        if (assigned_[var]) completed.push_back(var);
      }
    }
    for (const int var : free) {
      if (auto values = Values(var); values.ok() && !values->empty()) {
        Assign(var, values->front());
        completed.push_back(var);
      }
    }
    for (const int var : impl_.order) {  // derived variables that nothing counted on, for the example
      if (assigned_[var] || impl_.vars[var].input) continue;
      Derive(var);
      completed.push_back(var);
    }
  }

  void ReportError(uint64_t weight, const std::string& error) {
    const std::vector<TablePoint> points(impl_.tables.size());
    EnumeratedRegion region;
    region.region.axes = axes_;
    region.region.states = weight;
    region.region.example = example_;
    region.error = error;
    region.tables = points;
    stats_.states = SaturatingAdd(stats_.states, weight);
    visit_(region);
  }

  void Settle(uint64_t weight, const std::vector<std::vector<Tri>>& constraints,
              const std::vector<TablePoint>& points) {
    const uint64_t states = SaturatingMultiply(weight, CountStates(constraints));
    if (states == 0) return;
    std::vector<int> completed;
    Complete(constraints, completed);
    EnumeratedRegion region;
    region.region.axes = axes_;
    region.region.states = states;
    region.region.example = example_;
    region.tables = points;
    for (const int var : completed) Unassign(var);
    stats_.states = SaturatingAdd(stats_.states, states);
    visit_(region);
  }

  static constexpr int32_t kSkipped = -1;
  static constexpr int32_t kDerived = -2;

  // The path is kept only for the cache.
  void Push(int32_t step) {
    if (cache_ != nullptr) path_.append(reinterpret_cast<const char*>(&step), sizeof step);
  }
  void Pop() {
    if (cache_ != nullptr) path_.resize(path_.size() - sizeof(int32_t));
  }

  // The node at the current path: from the cache, or made by `make`, which
  // fills its rule statuses (and kept in the cache while it has room).
  template <typename Make>
  WalkNode& NodeAt(WalkNode& local, Make make) {
    if (cache_ != nullptr && cache_->keeping) {
      if (auto it = cache_->nodes.find(path_); it != cache_->nodes.end()) {
        ++cache_->hits;
        return it->second;
      }
    }
    make(local.rules);
    if (cache_ == nullptr) return local;
    size_t bytes = sizeof(WalkNode) + 2 * path_.size();
    for (const RuleStatuses& rules : local.rules) bytes += rules.size() + rules.size() / 8 + sizeof(uint64_t);
    if (!cache_->KeepNode(bytes)) return local;
    for (const RuleStatuses& rules : local.rules) {
      std::vector<uint64_t> unknown(bitset::WordCount(static_cast<int>(rules.size())), 0);
      for (int r = 0; r < static_cast<int>(rules.size()); ++r) {
        if (rules[r] == Tri::kUnknown) bitset::Set(unknown.data(), r);
      }
      local.unknown.push_back(std::move(unknown));
    }
    WalkNode& node = cache_->nodes.emplace(path_, std::move(local)).first->second;
    node.cached = true;
    return node;
  }

  // Per table, the rule statuses and the decision: from the statuses, or
  // from the compiled matcher (at a full fact vector).
  const std::vector<TablePoint>& Points(WalkNode& node, bool use_matcher, std::vector<TablePoint>& local) {
    std::optional<std::vector<TablePoint>>& kept = use_matcher ? node.matched : node.decided;
    if (kept) return *kept;
    local.resize(impl_.tables.size());
    for (size_t t = 0; t < local.size(); ++t) {
      local[t].rules = node.rules[t];
      if (!use_matcher) {
        local[t].decision = DecideFromStatuses(static_cast<int>(t), node.rules[t].all());
        continue;
      }
      auto match = impl_.tables[t].compiled->Match(frames_[t]);
      TableDecision& decision = local[t].decision;
      decision.known = true;
      if (!match.ok()) {
        decision.error = match.error().message;
        continue;
      }
      decision.matched_known = true;
      decision.matched = match->matched;
      decision.selected = match->selected;
      decision.violation = match->violation;
      std::vector<Tri> statuses(node.rules[t].size(), Tri::kFalse);
      for (const int r : match->matched) statuses[r] = Tri::kTrue;
      local[t].rules = RuleStatuses(std::move(statuses));
    }
    if (!node.cached || !cache_->Keep(PointsBytes(local))) return local;
    kept = std::move(local);
    return *kept;
  }

  // The position `from` not split on: the statuses stay as they are.
  void WalkSkipping(int from, WalkNode& node, const std::vector<std::vector<Tri>>& constraints,
                    uint64_t weight) {
    if (cache_ == nullptr) {  // then a node holds nothing of its path but the statuses
      Walk(from + 1, node, constraints, weight);
      return;
    }
    Push(kSkipped);
    WalkNode local;
    WalkNode& child = NodeAt(local, [&](std::vector<RuleStatuses>& rules) { rules = node.rules; });
    Walk(from + 1, child, constraints, weight);
    Pop();
  }

  void Walk(int from, WalkNode& node, const std::vector<std::vector<Tri>>& constraints, uint64_t weight) {
    if (options_.max_nodes > 0 && stats_.nodes >= options_.max_nodes) {
      stats_.complete = false;
      return;
    }
    ++stats_.nodes;
    const int table_count = static_cast<int>(impl_.tables.size());
    const bool full = from == end();
    // Unsplit variables are read only by decided rules, or by rules the
    // triage ignores (then the statuses decide, not the matcher).
    const bool use_matcher = full && (skipped_.empty() || options_.interesting_rules.empty());
    std::vector<TablePoint> local_points;
    const std::vector<TablePoint>* points = &Points(node, use_matcher, local_points);
    const Triage triage = options_.triage(*points);
    if (triage == Triage::kSkip) return;
    if (full || triage == Triage::kSettled) {
      bool constraints_decided = true;
      for (const auto& table_constraints : constraints) {
        for (const Tri status : table_constraints)
          constraints_decided = constraints_decided && status != Tri::kUnknown;
      }
      bool invariants_decided = true;
      if (options_.invariants) {
        if (points != &local_points) local_points = *points;  // the cached ones stay as they are
        points = &local_points;
        invariants_decided = EvaluateInvariants(local_points, full);
      }
      if (full || ((constraints_decided || !options_.split_on_constraints) && invariants_decided)) {
        Settle(weight, constraints, *points);
        return;
      }
    }

    const int var = impl_.order[from];
    if (!impl_.vars[var].input && !Relevant(var, node, constraints)) {
      skipped_.push_back(var);
      WalkSkipping(from, node, constraints, weight);
      skipped_.pop_back();
      return;
    }
    if (impl_.vars[var].input && !Relevant(var, node, constraints)) {
      auto values = Values(var);
      if (!values.ok()) {
        ReportError(SaturatingMultiply(weight, CountStates(constraints)), values.error().message);
        return;
      }
      if (values->empty()) return;
      skipped_.push_back(var);  // counted when the region is settled
      WalkSkipping(from, node, constraints, weight);
      skipped_.pop_back();
      return;
    }
    std::vector<std::vector<Value>> local_classes;
    const std::vector<std::vector<Value>>* classes = &local_classes;
    if (impl_.vars[var].input) {
      auto values = Values(var);
      if (!values.ok()) {
        ReportError(SaturatingMultiply(weight, CountStates(constraints)), values.error().message);
        return;
      }
      classes = &Classes(var, *values, node, local_classes);
    } else {
      local_classes.push_back({});
    }
    for (size_t c = 0; c < classes->size(); ++c) {
      const std::vector<Value>& values = (*classes)[c];
      if (impl_.vars[var].input) {
        Assign(var, values.front());
        axes_[var] = RegionAxis::Of(values);
      } else if (std::string error = Derive(var); !error.empty()) {
        ReportError(SaturatingMultiply(weight, CountStates(constraints)), error);
        Unassign(var);
        return;
      }
      std::vector<std::vector<Tri>> next_constraints = constraints;
      bool excluded = false;
      std::string error;
      for (int t = 0; t < table_count && !excluded; ++t) {
        for (const int constraint : impl_.constraints_at[from][t]) {
          if (next_constraints[t][constraint] != Tri::kUnknown) continue;
          next_constraints[t][constraint] = EvaluateConstraint(t, constraint, error);
          if (next_constraints[t][constraint] == Tri::kFalse) excluded = true;
          if (!error.empty()) break;
        }
        if (!error.empty()) break;
      }
      const uint64_t class_weight = SaturatingMultiply(weight, values.empty() ? 1 : values.size());
      if (!error.empty()) {
        ReportError(SaturatingMultiply(class_weight, CountStates(next_constraints)), error);
      } else if (!excluded) {
        Push(impl_.vars[var].input ? static_cast<int32_t>(c) : kDerived);
        WalkNode local;
        WalkNode& child = NodeAt(local, [&](std::vector<RuleStatuses>& rules) {
          rules = node.rules;
          for (int t = 0; t < table_count; ++t) {
            if (impl_.rules_at[from][t].empty()) continue;
            std::vector<Tri> statuses = node.rules[t].all();
            for (const int r : impl_.rules_at[from][t]) {
              if (statuses[r] == Tri::kUnknown) statuses[r] = EvaluateRule(t, r);
            }
            rules[t] = RuleStatuses(std::move(statuses));
          }
        });
        Walk(from + 1, child, next_constraints, class_weight);
        Pop();
      }
    }
    Unassign(var);
  }

  const DomainEnumerator::Impl& impl_;
  const EnumerationOptions& options_;
  const std::function<void(const EnumeratedRegion&)>& visit_;
  std::vector<expr::Frame> frames_;
  std::vector<RegionAxis> axes_;
  std::vector<Value> example_;
  std::vector<int> skipped_;  // variables not split on, above this node
  std::vector<bool> assigned_;
  std::unordered_map<std::string, uint64_t> count_memo_;
  EnumerationStats stats_;
  std::vector<std::vector<uint64_t>> every_rule_;  // per table, when options_.interesting_rules is empty
  EnumerationCache::Impl* cache_ = nullptr;
  std::string path_;  // per position above the current node: the class assigned, kSkipped or kDerived
};

}  // namespace

DomainEnumerator::DomainEnumerator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DomainEnumerator::~DomainEnumerator() = default;

Result<std::unique_ptr<const DomainEnumerator>> DomainEnumerator::Create(std::vector<Table> tables) {
  auto impl = std::make_unique<Impl>();
  for (const Table& table : tables) {
    if (!table.compiled) return Error{ErrorCode::kInvalidArgument, "no rule set to enumerate", {}};
    auto data = MakeTable(table);
    if (!data.ok()) return data.error();
    impl->tables.push_back(std::move(data).value());
  }
  auto built = impl->Build();
  if (!built.ok()) return built.error();
  return std::unique_ptr<const DomainEnumerator>(new DomainEnumerator(std::move(impl)));
}

const std::vector<std::string>& DomainEnumerator::names() const { return impl_->names; }
const std::vector<bool>& DomainEnumerator::inputs() const { return impl_->inputs; }
const std::vector<std::optional<std::vector<Value>>>& DomainEnumerator::full_domains() const {
  return impl_->full_domains;
}

std::vector<std::string> DomainEnumerator::EnumerationOrder() const {
  std::vector<std::string> order;
  for (const int var : impl_->order) {
    if (impl_->vars[var].input) order.push_back(impl_->vars[var].name);
  }
  return order;
}

EnumerationStats DomainEnumerator::Run(const EnumerationOptions& options,
                                       const std::function<void(const EnumeratedRegion&)>& visit) const {
  return Walker(*impl_, options, visit).Run();
}

}  // namespace ruleplane
