// DomainEnumerator: walks every fact vector of the declared domains of one or
// more rule sets (one for `verify`, two for `diff`), and reports it region by
// region with what each rule set decides there. No snapshot is involved: the
// input facts (VerificationModel) take the values of their domains, derived
// facts are computed from them, params take their defaults and overrides.
//
// The walk assigns one fact at a time, in an order chosen so that rules are
// decided early: facts that constraints read first, then facts by the first
// rule (in hit-policy order) that reads them, each after the facts its domain
// bounds and derivation read. Facts not yet assigned hold an error value;
// CEL's error-absorbing && and || (and a cell that is false) then decide a
// rule, a constraint or an invariant as soon as the assigned facts do, for
// every value the others may take. A fact that no undecided rule (of those
// the caller cares about), constraint or invariant reads is not split on.
// A region is settled as soon as the caller says the rule statuses decide
// what it cares about and the invariants (when asked) and the constraints
// (unless asked not to) are decided: the facts still unassigned are "any"
// there, and the region counts the combinations of their values that satisfy
// the constraints left, group by independent group. A fact that only
// `==`/`<`/range/`in` cells of its own column read is enumerated one value
// per class of values its cells treat alike. Full fact vectors are decided by
// the compiled matcher (CompiledRuleSet::Match).
//
//   auto enumerator = DomainEnumerator::Create({{compiled, {}}});
//   (*enumerator)->Run(options, [&](const EnumeratedRegion& region) { ... });
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/common/error.h"
#include "engine/match/compiled_rule_set.h"
#include "engine/verify/region.h"

namespace ruleplane {

// Three-valued truth: decided true, decided false, or not decided by the
// facts assigned so far.
enum class Tri : uint8_t { kFalse, kTrue, kUnknown };

struct TableDecision {
  bool known = false;          // the rule statuses decide the hit policy's outcome
  bool matched_known = false;  // every rule's status is decided (then `matched` is exact)
  std::vector<int> matched;    // rules that match, in rule order
  std::vector<int> selected;   // what the hit policy selects
  std::optional<Error> violation;
  std::string error;  // matching a full fact vector failed
};

// Per rule, its status; immutable and shared, so that copies are cheap.
class RuleStatuses {
 public:
  RuleStatuses() = default;
  explicit RuleStatuses(std::vector<Tri> statuses)
      : statuses_(std::make_shared<const std::vector<Tri>>(std::move(statuses))), all_(statuses_.get()) {}

  const std::vector<Tri>& all() const { return *all_; }
  Tri operator[](size_t rule) const { return (*all_)[rule]; }
  size_t size() const { return all_->size(); }
  std::vector<Tri>::const_iterator begin() const { return all_->begin(); }
  std::vector<Tri>::const_iterator end() const { return all_->end(); }

 private:
  static inline const std::vector<Tri> kNone;
  std::shared_ptr<const std::vector<Tri>> statuses_;
  const std::vector<Tri>* all_ = &kNone;  // *statuses_, or kNone
};

struct TablePoint {
  RuleStatuses rules;  // per rule
  TableDecision decision;
  std::vector<Tri> invariants;                // per invariant; kUnknown when not evaluated
  std::vector<std::string> invariant_errors;  // per invariant, at a full fact vector: why it is not a bool
};

struct EnumeratedRegion {
  Region region;                       // axes: DomainEnumerator::names()
  std::span<const TablePoint> tables;  // per table; valid during the visit only
  // A derived fact, domain bound or constraint that cannot be evaluated in
  // this region (the region is not split further).
  std::string error;
};

enum class Triage { kContinue, kSettled, kSkip };

// What a walk computes at each partial assignment (rule statuses, decisions,
// value classes) depends on the assignment only, not on the triage: runs of
// one enumerator that share a cache compute each once. verify's dead- and
// masked-rule checks (a run per rule) share one, which keeps them linear in
// the rules. Holds at most about 64 MB, and stops growing when the runs turn
// out not to share what they compute; not thread-safe.
class EnumerationCache {
 public:
  EnumerationCache();
  ~EnumerationCache();
  EnumerationCache(const EnumerationCache&) = delete;
  EnumerationCache& operator=(const EnumerationCache&) = delete;

  struct Impl;  // internal
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

struct EnumerationOptions {
  // Whether a region is settled, must be split further, or is of no interest
  // (skipped, not reported). Called with each table's rule statuses and,
  // when they decide it, its decision. Full fact vectors are never split.
  std::function<Triage(const std::vector<TablePoint>&)> triage;
  bool invariants = true;  // settle only once every invariant is decided
  // Per table, a bitset (engine/common/bitset.h) of the rules whose status
  // matters to the triage (empty: every rule). A fact that only settled or
  // uninteresting rules read is not split on.
  std::vector<std::vector<uint64_t>> interesting_rules;
  // Whether undecided constraints are split on like rules (so that regions
  // settle with every constraint decided); when false, they only restrict
  // and count the states of settled regions, which is cheaper when few rules
  // matter.
  bool split_on_constraints = true;
  // Stop after this many partial assignments (0: no limit); the stats say so.
  uint64_t max_nodes = 0;
  // Shared with other runs of the same enumerator (none: nothing is kept).
  EnumerationCache* cache = nullptr;
};

struct EnumerationStats {
  uint64_t states = 0;            // fact vectors in the reported regions
  uint64_t nodes = 0;             // partial assignments evaluated
  uint64_t rule_evaluations = 0;  // rule statuses computed (those found in the cache are not)
  bool complete = true;           // false when max_nodes stopped the walk
};

class DomainEnumerator {
 public:
  struct Table {
    std::shared_ptr<const CompiledRuleSet> compiled;
    ParamOverrides overrides;  // only params the table declares
  };

  // Errors: a table that verification cannot evaluate (VerificationModel
  // problems), params that do not convert, facts ordered inconsistently
  // between the tables.
  static Result<std::unique_ptr<const DomainEnumerator>> Create(std::vector<Table> tables);
  ~DomainEnumerator();

  // The enumeration's facts (region axes), by name, in declaration order.
  const std::vector<std::string>& names() const;
  // Per axis: whether it is enumerated (an input); else it is derived.
  const std::vector<bool>& inputs() const;
  // Per axis: every value of its domain, when that does not depend on other facts.
  const std::vector<std::optional<std::vector<Value>>>& full_domains() const;
  // Axes in the order they are assigned.
  std::vector<std::string> EnumerationOrder() const;

  EnumerationStats Run(const EnumerationOptions& options,
                       const std::function<void(const EnumeratedRegion&)>& visit) const;

  struct Impl;  // internal

 private:
  explicit DomainEnumerator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ruleplane
