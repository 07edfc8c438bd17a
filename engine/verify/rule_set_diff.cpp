#include "engine/verify/rule_set_diff.h"

#include <algorithm>
#include <map>
#include <utility>

#include "engine/plan/plan.h"
#include "engine/rule_file/verification_model.h"
#include "engine/verify/domain_enumerator.h"
#include "engine/verify/verifier.h"

namespace ruleplane {
namespace {

// What a table decided, as text, and a key that tells decisions apart exactly.
struct DecisionSummary {
  std::string text;
  std::string key;
};

DecisionSummary Summarize(const RuleSet& rule_set, const TablePoint& point, const std::string& error) {
  const TableDecision& decision = point.decision;
  if (!error.empty()) return {"an evaluation error (" + error + ")", "error:" + error};
  if (!decision.error.empty())
    return {"an evaluation error (" + decision.error + ")", "error:" + decision.error};
  if (decision.violation) {
    const std::string ids = QuotedRuleIds(rule_set, decision.matched);
    return {"a hit-policy violation (" + ids + " match)", "violation:" + ids};
  }
  if (decision.selected.empty()) return {"no rule", "none"};
  DecisionSummary summary{QuotedRuleIds(rule_set, decision.selected), ""};
  for (const int r : decision.selected)
    summary.key += rule_set.rules[r].id + "=" + ActionsSignature(rule_set.rules[r]) + "|";
  return summary;
}

bool SameIds(const RuleSet& a, const std::vector<int>& selected_a, const RuleSet& b,
             const std::vector<int>& selected_b) {
  if (selected_a.size() != selected_b.size()) return false;
  for (size_t i = 0; i < selected_a.size(); ++i) {
    if (a.rules[selected_a[i]].id != b.rules[selected_b[i]].id) return false;
  }
  return true;
}

constexpr size_t kMaxDifferences = 20;

struct SharedInputFacts {
  int count = 0;                       // input facts of the same name in both
  std::vector<std::string> redefined;  // those of them whose expressions differ
};

SharedInputFacts SharedInputs(const RuleSet& a, const RuleSet& b) {
  const VerificationModel model_a = AnalyzeForVerification(a), model_b = AnalyzeForVerification(b);
  SharedInputFacts shared;
  for (size_t f = 0; f < a.facts.size(); ++f) {
    const int other = b.FindFact(a.facts[f].name);
    if (model_a.roles[f] != VerificationModel::Role::kInput || other < 0 ||
        model_b.roles[other] != VerificationModel::Role::kInput)
      continue;
    ++shared.count;
    if (a.facts[f].expression.text != b.facts[other].expression.text)
      shared.redefined.push_back(a.facts[f].name);
  }
  return shared;
}

}  // namespace

VerificationReport DiffRuleSets(const std::shared_ptr<const CompiledRuleSet>& old_rules,
                                const std::shared_ptr<const CompiledRuleSet>& new_rules,
                                const ParamOverrides& overrides, uint64_t max_evaluations) {
  const RuleSet& old_set = old_rules->rule_set();
  const RuleSet& new_set = new_rules->rule_set();
  VerificationReport report;
  report.diff = true;
  report.title = old_set.id() + " (" + old_set.file + ") -> " + new_set.id() + " (" + new_set.file + ")";
  auto fail = [&](const std::string& message, const SourcePosition& position) {
    Finding finding;
    finding.kind = Finding::Kind::kUnverifiable;
    finding.message = "cannot compare: " + message;
    finding.position = position;
    report.findings.push_back(std::move(finding));
    return report;
  };
  for (const RuleSet* rule_set : {&old_set, &new_set}) {
    const VerificationModel model = AnalyzeForVerification(*rule_set);
    if (!model.opted_in) return fail(rule_set->id() + " declares no domain", {});
    if (!model.problems.empty()) return fail(model.problems.front().message, model.problems.front().position);
  }
  auto enumerator = DomainEnumerator::Create({{old_rules, OverridesDeclaredBy(old_set, overrides)},
                                              {new_rules, OverridesDeclaredBy(new_set, overrides)}});
  if (!enumerator.ok()) return fail(enumerator.error().message, enumerator.error().position);
  report.names = (*enumerator)->names();
  report.inputs = (*enumerator)->inputs();
  report.enumeration_order = (*enumerator)->EnumerationOrder();
  const SharedInputFacts shared = SharedInputs(old_set, new_set);
  if (!shared.redefined.empty()) {
    // A state pairs the two versions' facts by name; where they are derived
    // differently, a snapshot may well give them different values.
    Finding redefined;
    redefined.kind = Finding::Kind::kUnverifiable;
    redefined.severity = Diagnostic::Severity::kWarning;
    redefined.message = "facts derived differently in the two versions, paired by name all the same:";
    for (const std::string& name : shared.redefined) redefined.message += " " + name;
    redefined.message += "; where they differ from snapshot to snapshot, compare plans with --snapshots";
    report.findings.push_back(std::move(redefined));
  }

  std::map<std::string, size_t> index;
  std::vector<Finding> findings;
  EnumerationOptions options;
  options.invariants = false;
  options.max_nodes = max_evaluations;
  options.triage = [](const std::vector<TablePoint>& points) {
    return points[0].decision.known && points[1].decision.known ? Triage::kSettled : Triage::kContinue;
  };
  const EnumerationStats stats = (*enumerator)->Run(options, [&](const EnumeratedRegion& region) {
    const DecisionSummary before = Summarize(old_set, region.tables[0], region.error);
    const DecisionSummary after = Summarize(new_set, region.tables[1], region.error);
    if (before.key == after.key) return;
    std::string message = "old selects " + before.text + ", new selects " + after.text;
    if (before.text == after.text ||
        SameIds(old_set, region.tables[0].decision.selected, new_set, region.tables[1].decision.selected)) {
      message = before.text + " with different actions";
    }
    auto [it, inserted] = index.emplace(before.key + "\n" + after.key, findings.size());
    if (inserted) {
      Finding finding;
      finding.kind = Finding::Kind::kChanged;
      finding.severity = Diagnostic::Severity::kWarning;
      finding.message = message;
      findings.push_back(std::move(finding));
    }
    Finding& finding = findings[it->second];
    finding.states += region.region.states;
    if (finding.regions.empty() || !TryJoinRegion(finding.regions.back(), region.region)) {
      finding.regions.push_back(region.region);
    }
  });
  report.states = stats.states;
  report.evaluations = stats.nodes;
  if (!stats.complete) {
    Finding stopped;
    stopped.kind = Finding::Kind::kUnverifiable;
    stopped.severity = Diagnostic::Severity::kWarning;
    stopped.message = "incomplete: stopped after " + std::to_string(stats.nodes) +
                      " evaluations; the differences below cover only the states examined (" +
                      std::to_string(shared.count) +
                      " facts enumerated by both versions). Compare plans with --snapshots, or raise "
                      "--max-evaluations";
    report.findings.push_back(std::move(stopped));
  }
  // The largest differences first; the others summed up in one line.
  std::stable_sort(findings.begin(), findings.end(),
                   [](const Finding& a, const Finding& b) { return a.states > b.states; });
  uint64_t rest_states = 0;
  for (size_t i = 0; i < findings.size(); ++i) {
    if (i >= kMaxDifferences) {
      rest_states += findings[i].states;
      continue;
    }
    MergeFindingRegions(findings[i], (*enumerator)->full_domains());
    report.findings.push_back(std::move(findings[i]));
  }
  if (findings.size() > kMaxDifferences) {
    Finding rest;
    rest.kind = Finding::Kind::kChanged;
    rest.severity = Diagnostic::Severity::kWarning;
    rest.message = "... and " + std::to_string(findings.size() - kMaxDifferences) +
                   " more pairs of decisions, over " + std::to_string(rest_states) + " states";
    report.findings.push_back(std::move(rest));
  }
  return report;
}

}  // namespace ruleplane
