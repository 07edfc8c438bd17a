#include "engine/verify/verifier.h"

#include <algorithm>
#include <map>
#include <utility>

#include "engine/common/bitset.h"
#include "engine/plan/plan.h"
#include "engine/rule_file/verification_model.h"
#include "engine/verify/domain_enumerator.h"

namespace ruleplane {
namespace {

using Severity = Diagnostic::Severity;

// Findings by key, in the order first seen.
class FindingCollector {
 public:
  Finding& Get(const std::string& key, Finding::Kind kind, Severity severity, const std::string& message,
               const SourcePosition& position = {}) {
    auto [it, inserted] = index_.emplace(key, findings_.size());
    if (inserted) {
      Finding finding;
      finding.kind = kind;
      finding.severity = severity;
      finding.message = message;
      finding.position = position;
      findings_.push_back(std::move(finding));
    }
    return findings_[it->second];
  }

  void Add(Finding& finding, const Region& region) {
    finding.states += region.states;
    if (finding.regions.empty() || !TryJoinRegion(finding.regions.back(), region)) {
      finding.regions.push_back(region);
    }
  }

  std::vector<Finding> Take() { return std::move(findings_); }
  bool empty() const { return findings_.empty(); }

 private:
  std::map<std::string, size_t> index_;
  std::vector<Finding> findings_;
};

int KindOrder(Finding::Kind kind) {
  switch (kind) {
    case Finding::Kind::kUnverifiable:
      return 0;
    case Finding::Kind::kEvaluationError:
      return 1;
    case Finding::Kind::kConflict:
      return 2;
    case Finding::Kind::kGap:
      return 3;
    case Finding::Kind::kInvariant:
      return 4;
    case Finding::Kind::kDeadRule:
      return 5;
    case Finding::Kind::kMaskedRule:
      return 6;
    case Finding::Kind::kOverlap:
      return 7;
    case Finding::Kind::kMaskedBy:
    case Finding::Kind::kChanged:
      return 8;
  }
  return 9;
}

SourcePosition InFile(SourcePosition position, const RuleSet& rule_set) {
  if (position.file.empty()) position.file = rule_set.file;
  return position;
}

std::string Join(const std::vector<int>& items) {
  std::string text;
  for (const int item : items) text += std::to_string(item) + ",";
  return text;
}

class Verification {
 public:
  Verification(const std::shared_ptr<const CompiledRuleSet>& compiled, const ParamOverrides& overrides)
      : compiled_(compiled),
        rule_set_(compiled->rule_set()),
        overrides_(OverridesDeclaredBy(rule_set_, overrides)) {}

  VerificationReport Run() {
    report_.title = rule_set_.file + ": " + rule_set_.id() + " (" + HitPolicyName(rule_set_.hit_policy) + ")";
    const VerificationModel model = AnalyzeForVerification(rule_set_);
    if (!model.opted_in) {
      Unverifiable("the table declares no domain, constraint or invariant: there is nothing to enumerate",
                   {});
      return std::move(report_);
    }
    for (const Diagnostic& problem : model.problems) Unverifiable(problem.message, problem.position);
    if (!model.problems.empty()) return std::move(report_);
    auto enumerator = DomainEnumerator::Create({{compiled_, overrides_}});
    if (!enumerator.ok()) {
      Unverifiable(enumerator.error().message, enumerator.error().position);
      return std::move(report_);
    }
    enumerator_ = enumerator->get();
    report_.names = enumerator_->names();
    report_.inputs = enumerator_->inputs();
    report_.enumeration_order = enumerator_->EnumerationOrder();

    selected_ever_.assign(rule_set_.rules.size(), false);
    EnumerationOptions options;
    // Under RULE_ORDER and COLLECT every matching rule is selected: without
    // invariants, a region is settled as soon as one rule surely matches (it
    // is no gap); overlaps are searched pair by pair below.
    const bool need_decision = !rule_set_.invariants.empty() || !SelectsEveryMatch();
    options.triage = [need_decision](const std::vector<TablePoint>& points) {
      const TablePoint& point = points[0];
      if (point.decision.known) return Triage::kSettled;
      if (!need_decision &&
          std::find(point.rules.begin(), point.rules.end(), Tri::kTrue) != point.rules.end()) {
        return Triage::kSettled;
      }
      return Triage::kContinue;
    };
    const EnumerationStats stats =
        enumerator_->Run(options, [&](const EnumeratedRegion& region) { Visit(region); });
    report_.states = stats.states;
    report_.evaluations = stats.nodes;
    report_.rule_evaluations = stats.rule_evaluations;
    rank_ = RuleRanks();
    by_rank_.resize(rank_.size());
    for (size_t r = 0; r < rank_.size(); ++r) by_rank_[rank_[r]] = static_cast<int>(r);
    for (int r = 0; r < static_cast<int>(rule_set_.rules.size()); ++r) {
      if (!selected_ever_[r]) CheckNeverSelected(r);
    }
    if (rule_set_.hit_policy == HitPolicy::kCollect) CheckOverlaps();

    std::vector<Finding> findings = collector_.Take();
    for (Finding& finding : findings) MergeFindingRegions(finding, enumerator_->full_domains());
    // Errors first, then by kind, then in the order found.
    std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
      return std::pair(a.severity != Severity::kError, KindOrder(a.kind)) <
             std::pair(b.severity != Severity::kError, KindOrder(b.kind));
    });
    for (Finding& finding : findings) report_.findings.push_back(std::move(finding));
    return std::move(report_);
  }

 private:
  void Unverifiable(const std::string& message, const SourcePosition& position) {
    Finding finding;
    finding.kind = Finding::Kind::kUnverifiable;
    finding.message = "cannot verify: " + message;
    finding.position = position;
    report_.findings.push_back(std::move(finding));
  }

  // Per rule: its place in hit-policy order (PRIORITY: by priority, then rule order).
  std::vector<int> RuleRanks() const {
    const int rule_count = static_cast<int>(rule_set_.rules.size());
    std::vector<int> order(rule_count), rank(rule_count);
    for (int r = 0; r < rule_count; ++r) order[r] = r;
    if (rule_set_.hit_policy == HitPolicy::kPriority) {
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return rule_set_.rules[a].priority > rule_set_.rules[b].priority;
      });
    }
    for (int i = 0; i < rule_count; ++i) rank[order[i]] = i;
    return rank;
  }

  bool SelectsEveryMatch() const {
    return rule_set_.hit_policy == HitPolicy::kRuleOrder || rule_set_.hit_policy == HitPolicy::kCollect;
  }

  void Visit(const EnumeratedRegion& enumerated) {
    const Region& region = enumerated.region;
    const TablePoint& point = enumerated.tables.empty() ? TablePoint{} : enumerated.tables[0];
    const std::string error = !enumerated.error.empty() ? enumerated.error : point.decision.error;
    if (!error.empty()) {
      collector_.Add(collector_.Get("error:" + error, Finding::Kind::kEvaluationError, Severity::kError,
                                    "cannot evaluate: " + error),
                     region);
      return;
    }
    const TableDecision& decision = point.decision;
    for (const int r : decision.selected) selected_ever_[r] = true;
    for (size_t r = 0; r < point.rules.size() && SelectsEveryMatch(); ++r) {
      if (point.rules[r] == Tri::kTrue) selected_ever_[r] = true;
    }
    if (!decision.known) {
      // Settled without the whole decision: a rule matches, so this is no gap.
    } else if (decision.violation) {
      const bool any = rule_set_.hit_policy == HitPolicy::kAny;
      const std::string message = "rules " + QuotedRuleIds(rule_set_, decision.matched) +
                                  (any ? " match with different actions (ANY)" : " match together (UNIQUE)");
      collector_.Add(
          collector_.Get("conflict:" + Join(decision.matched), Finding::Kind::kConflict, Severity::kError,
                         message, InFile(decision.violation->position, rule_set_)),
          region);
    } else if (decision.selected.empty()) {
      const Severity severity = rule_set_.allow_gaps ? Severity::kWarning : Severity::kError;
      const std::string message = rule_set_.allow_gaps ? "no rule decides these states (allowed: allowGaps)"
                                                       : "gap: no rule decides these states";
      collector_.Add(collector_.Get("gap", Finding::Kind::kGap, severity, message), region);
    }
    for (size_t i = 0; i < point.invariants.size(); ++i) {
      const Expression& invariant = rule_set_.invariants[i];
      const SourcePosition position = InFile(invariant.position, rule_set_);
      if (point.invariants[i] == Tri::kFalse) {
        collector_.Add(collector_.Get("invariant:" + std::to_string(i), Finding::Kind::kInvariant,
                                      Severity::kError, "invariant violated: " + invariant.text, position),
                       region);
      } else if (!point.invariant_errors[i].empty()) {
        collector_.Add(
            collector_.Get("invariant-error:" + std::to_string(i) + ":" + point.invariant_errors[i],
                           Finding::Kind::kEvaluationError, Severity::kError,
                           "cannot evaluate invariant " + invariant.text + ": " + point.invariant_errors[i],
                           position),
            region);
      }
    }
  }

  // COLLECT: each pair of rules with different actions that match together.
  void CheckOverlaps() {
    const int rule_count = static_cast<int>(rule_set_.rules.size());
    for (int a = 0; a < rule_count; ++a) {
      for (int b = a + 1; b < rule_count; ++b) {
        if (ActionsSignature(rule_set_.rules[a]) == ActionsSignature(rule_set_.rules[b])) continue;
        EnumerationOptions options;
        options.invariants = false;
        options.split_on_constraints = false;
        options.cache = &cache_;
        options.interesting_rules = {std::vector<uint64_t>(bitset::WordCount(rule_count), 0)};
        bitset::Set(options.interesting_rules[0].data(), a);
        bitset::Set(options.interesting_rules[0].data(), b);
        options.triage = [a, b](const std::vector<TablePoint>& points) {
          const RuleStatuses& rules = points[0].rules;
          if (rules[a] == Tri::kFalse || rules[b] == Tri::kFalse) return Triage::kSkip;
          return rules[a] == Tri::kTrue && rules[b] == Tri::kTrue ? Triage::kSettled : Triage::kContinue;
        };
        const EnumerationStats stats = enumerator_->Run(options, [&](const EnumeratedRegion& enumerated) {
          if (!enumerated.error.empty()) return;
          collector_.Add(
              collector_.Get("overlap:" + Join({a, b}), Finding::Kind::kOverlap, Severity::kWarning,
                             "rules " + QuotedRuleIds(rule_set_, {a, b}) +
                                 " with different actions match together (COLLECT)"),
              enumerated.region);
        });
        report_.rule_evaluations += stats.rule_evaluations;
      }
    }
  }

  // A rule that no region selected: dead, or masked by the rules that win where it matches.
  void CheckNeverSelected(int rule) {
    FindingCollector causes;
    EnumerationOptions options;
    options.invariants = false;
    options.split_on_constraints = false;
    options.cache = &cache_;
    const bool selects_every_match = SelectsEveryMatch();
    options.triage = [rule, selects_every_match](const std::vector<TablePoint>& points) {
      const Tri status = points[0].rules[rule];
      if (status == Tri::kFalse) return Triage::kSkip;
      const bool decided = selects_every_match || points[0].decision.known;
      return status == Tri::kTrue && decided ? Triage::kSettled : Triage::kContinue;
    };
    // Only the rules that can win over this one matter: itself, the rules
    // before it in hit-policy order, or every rule under UNIQUE and ANY.
    const int rule_count = static_cast<int>(rule_set_.rules.size());
    const int word_count = bitset::WordCount(rule_count);
    options.interesting_rules = {std::vector<uint64_t>(word_count, 0)};
    uint64_t* interesting = options.interesting_rules[0].data();
    if (rule_set_.hit_policy == HitPolicy::kUnique || rule_set_.hit_policy == HitPolicy::kAny) {
      bitset::SetFirst(interesting, word_count, rule_count);
    } else if (rule_set_.hit_policy == HitPolicy::kFirst) {
      bitset::SetFirst(interesting, word_count, rule + 1);
    } else if (!selects_every_match) {
      for (int i = 0; i <= rank_[rule]; ++i) bitset::Set(interesting, by_rank_[i]);
    }
    bitset::Set(interesting, rule);
    bool matches = false;
    const EnumerationStats stats = enumerator_->Run(options, [&](const EnumeratedRegion& enumerated) {
      if (enumerated.tables.empty() || !enumerated.error.empty()) return;
      const TableDecision& decision = enumerated.tables[0].decision;
      if (!decision.error.empty()) return;
      matches = true;
      if (selects_every_match) return;  // it is selected here
      if (decision.violation) {
        causes.Add(
            causes.Get("violation:" + Join(decision.matched), Finding::Kind::kMaskedBy, Severity::kError,
                       "a hit-policy violation instead (rules " + QuotedRuleIds(rule_set_, decision.matched) +
                           " match)"),
            enumerated.region);
        return;
      }
      causes.Add(causes.Get("selected:" + Join(decision.selected), Finding::Kind::kMaskedBy, Severity::kError,
                            "masked by " + QuotedRuleIds(rule_set_, decision.selected)),
                 enumerated.region);
    });
    report_.rule_evaluations += stats.rule_evaluations;
    if (matches && causes.empty()) return;
    const Rule& source = rule_set_.rules[rule];
    const SourcePosition position = InFile(source.position, rule_set_);
    if (!matches) {
      collector_.Get(
          "dead:" + source.id, Finding::Kind::kDeadRule, Severity::kError,
          "rule '" + source.id + "' never matches: no state satisfies its cells and condition together",
          position);
      return;
    }
    Finding& masked = collector_.Get("masked:" + source.id, Finding::Kind::kMaskedRule, Severity::kError,
                                     "rule '" + source.id + "' matches but is never selected", position);
    masked.causes = causes.Take();
    for (const Finding& cause : masked.causes) masked.states += cause.states;
  }

  std::shared_ptr<const CompiledRuleSet> compiled_;
  const RuleSet& rule_set_;
  ParamOverrides overrides_;
  const DomainEnumerator* enumerator_ = nullptr;
  VerificationReport report_;
  FindingCollector collector_;
  std::vector<bool> selected_ever_;
  std::vector<int> rank_;     // RuleRanks()
  std::vector<int> by_rank_;  // rules in hit-policy order
  EnumerationCache cache_;    // shared by the runs after the first
};

}  // namespace

std::string ActionsSignature(const Rule& rule) {
  std::string signature;
  auto add = [&](const std::string& part) { signature += std::to_string(part.size()) + ":" + part; };
  for (const ActionSpec& action : rule.then) {
    add(action.action);
    add(action.for_each ? action.for_each->text : "");
    add(action.as);
    add(action.target ? action.target->text : "");
    for (const ActionParam& param : action.params) {
      add(param.name);
      add(param.value.text);
    }
    signature += ';';
  }
  return signature;
}

std::string QuotedRuleIds(const RuleSet& rule_set, const std::vector<int>& rules) {
  std::string text;
  for (size_t i = 0; i < rules.size(); ++i) {
    if (i > 0) text += i + 1 == rules.size() ? " and " : ", ";
    text += "'" + rule_set.rules[rules[i]].id + "'";
  }
  return text;
}

VerificationReport Verify(const std::shared_ptr<const CompiledRuleSet>& compiled,
                          const ParamOverrides& overrides) {
  return Verification(compiled, overrides).Run();
}

}  // namespace ruleplane
