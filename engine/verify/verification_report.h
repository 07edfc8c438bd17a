// What `ruleplane verify` and `ruleplane diff` found, and its text form.
//
// A finding is one kind of problem (a gap, a conflict between two given
// rules, a violated invariant, ...) with the number of states it holds, the
// regions those states form (each with one concrete example) and, for a
// masked rule, a sub-finding per rule that wins where it matches.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/rule_file/diagnostics.h"
#include "engine/verify/region.h"

namespace ruleplane {

struct Finding {
  enum class Kind {
    kUnverifiable,     // an expression verification cannot evaluate, or nothing to enumerate
    kEvaluationError,  // a fact, bound, constraint, cell or invariant failed on some states
    kConflict,         // UNIQUE / ANY: several rules match (with different actions, for ANY)
    kGap,              // no rule matches
    kInvariant,        // an invariant is false
    kDeadRule,         // a rule never matches
    kMaskedRule,       // a rule matches but is never selected (causes: who is)
    kOverlap,          // COLLECT: rules with different actions match together
    kMaskedBy,         // a cause of kMaskedRule
    kChanged,          // diff: the two rule sets decide differently
  };
  Kind kind = Kind::kGap;
  Diagnostic::Severity severity = Diagnostic::Severity::kError;
  std::string message;
  SourcePosition position;  // of the rule or expression concerned, when there is one
  uint64_t states = 0;
  std::vector<Region> regions;  // merged, largest first
  std::vector<Finding> causes;
};

struct VerificationReport {
  std::string title;               // "rules/x.yaml: name@1.0.0 (FIRST)"
  std::vector<std::string> names;  // region axes
  std::vector<bool> inputs;        // per axis: enumerated (else derived)
  std::vector<std::string> enumeration_order;
  uint64_t states = 0;       // fact vectors of the domain (satisfying the constraints)
  uint64_t evaluations = 0;  // partial assignments evaluated
  // Rule statuses computed over all the enumerations (the first and the dead-,
  // masked-rule and overlap searches): a measure of the work, not printed.
  uint64_t rule_evaluations = 0;
  std::vector<Finding> findings;
  bool diff = false;  // a diff: the findings are differences, not errors and warnings

  int Count(Diagnostic::Severity severity) const;
};

// Merges the finding's regions (and its causes'), largest first.
void MergeFindingRegions(Finding& finding,
                         const std::vector<std::optional<std::vector<Value>>>& full_domains);

// The report as text, without timing:
//   rules/x.yaml: etcd-druid-status@1.0.0 (FIRST)
//     error: no rule decides 120 states (2 regions)
//       n=0, clusterSize in [1..7]
//         e.g. n=0, clusterSize=1, ...
//     ...
//     1234 states, 567 evaluations: 1 error, 0 warnings
// At most `max_regions` regions per finding are listed (0: all).
std::string FormatVerificationReport(const VerificationReport& report, int max_regions);

}  // namespace ruleplane
