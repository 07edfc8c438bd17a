// RuleSet: the typed model of one rule file (apiVersion ruleplane.dev/v1,
// kind DecisionTable), as produced by the rule loader. Every node records
// where it came from. Expressions are already checked against the file's
// names, so later stages never see YAML and never re-resolve a name.
//
// Names visible to expressions in a rule file, in resolution order:
//   comprehension / forEach variables, facts (earlier facts only, for a fact),
//   params, `snapshot` (the whole snapshot document) and `now` (its observedAt).
// Frame layout (see FrameLayout): facts, then params, then snapshot, now.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/common/error.h"
#include "engine/common/value.h"
#include "engine/expr/expression.h"

namespace ruleplane {

enum class HitPolicy { kUnique, kAny, kFirst, kPriority, kRuleOrder, kCollect };
const char* HitPolicyName(HitPolicy policy);

// An expression as written, with its checked program.
struct Expression {
  std::string text;
  SourcePosition position;  // of the first character of `text` in the file
  std::shared_ptr<const expr::Program> program;
};

enum class ParamType { kBool, kInt, kDouble, kString, kDuration, kTimestamp };
const char* ParamTypeName(ParamType type);

struct Param {
  std::string name;
  ParamType type = ParamType::kString;
  Value default_value;
  std::string description;
  SourcePosition position;
};

// A fact's finite domain, for verification: `bool`, `enum ["a", "b"]`,
// `int [lo, hi]` (bounds may name params or earlier facts).
struct Domain {
  enum class Kind { kNone, kBool, kEnum, kInt };
  Kind kind = Kind::kNone;
  std::vector<Value> enum_values;
  std::optional<Expression> low, high;
  std::string text;
  SourcePosition position;
};

struct Fact {
  std::string name;
  Expression expression;
  Domain domain;
  // `outsideDomain: plan`: a value outside the domain is planned with as it
  // is (the plan is then one `verify` did not prove); by default it is an
  // evaluation error of the rule set.
  bool plan_outside_domain = false;
  std::string description;
  SourcePosition position;
};

enum class CompareOp { kEq, kNe, kLt, kLe, kGt, kGe };
const char* CompareOpText(CompareOp op);  // "==", "!=", ...

// One `when` cell: a test of one fact (the column).
struct Cell {
  enum class Kind {
    kAny,         // "-"
    kCompare,     // "> 0", "== n", and a bare value `3`, `true`, `"Leader"` (means ==)
    kRange,       // "[1..3]", "(0..n)", "[1..n)"
    kIn,          // "in [\"a\", \"b\"]", "in someListFact"
    kExpression,  // a boolean expression that names the column's fact itself
  };
  Kind kind = Kind::kAny;
  int fact = -1;     // index into RuleSet::facts
  std::string text;  // as written
  SourcePosition position;
  CompareOp op = CompareOp::kEq;                     // kCompare
  std::optional<Expression> operand;                 // kCompare, kIn (the list), kExpression
  std::optional<Expression> low, high;               // kRange
  bool low_inclusive = true, high_inclusive = true;  // kRange
};

struct ActionParam {
  std::string name;
  Expression value;
};

struct ActionSpec {
  std::string action;                  // a name from the action catalogue
  std::optional<Expression> for_each;  // a list (or map: its keys) to expand over
  std::string as;                      // the loop variable's name (default "item")
  std::optional<Expression> target;    // what the step acts on, e.g. a member name
  std::vector<ActionParam> params;
  SourcePosition position;
};

struct Rule {
  std::string id;
  std::string description;
  std::string source;
  int priority = 0;         // PRIORITY: higher wins; ties go to the earlier rule
  std::vector<Cell> cells;  // only the non-"-" cells, in the order written
  std::optional<Expression> condition;
  std::vector<ActionSpec> then;
  SourcePosition position;
};

struct ExpectedStep {
  std::string action;
  std::optional<std::string> target;
  std::optional<Value> params;  // a map; compared exactly when given
};

struct RuleTest {
  std::string name;
  std::optional<Value> snapshot;                      // inline snapshot document
  std::string snapshot_file;                          // or a path relative to the rule file
  std::vector<std::pair<std::string, Value>> params;  // overrides
  std::optional<std::vector<std::string>> expect_rules;
  std::optional<std::vector<ExpectedStep>> expect_steps;
  std::optional<std::string> expect_error;  // substring of the expected error
  SourcePosition position;
};

struct RuleSet {
  std::string file;  // path as given to the loader
  std::string name;
  std::string version;  // semver
  SourcePosition version_position;
  std::string source;   // which seed section it encodes
  std::string subject;  // snapshot kind without "Snapshot", e.g. "EtcdCluster"
  HitPolicy hit_policy = HitPolicy::kUnique;
  std::vector<Param> params;
  std::vector<Fact> facts;
  std::vector<Rule> rules;
  std::vector<Expression> constraints;  // boolean, over facts and params
  std::vector<Expression> invariants;   // boolean, over facts, params and the decision (see FrameLayout)
  bool allow_gaps = false;              // spec.allowGaps: states no rule decides are intended
  // spec.appliesWhen: a boolean over params, `snapshot` and `now`. When it is
  // false the rule set decides nothing for the snapshot (its facts are not
  // derived): e.g. the status rules before the StatefulSet exists.
  std::optional<Expression> applies_when;
  std::vector<RuleTest> tests;
  std::string digest;  // "sha256:<hex>" of the file's bytes

  std::string id() const { return name + "@" + version; }
  int FindFact(std::string_view fact_name) const;
  int FindParam(std::string_view param_name) const;
};

// Slots of the evaluation frame for a rule set: facts, params, snapshot, now.
// Invariants also see the decision, in the three slots after `now`:
// `rules` (selected rule ids), `actions` (their actions' names) and `steps`
// (one map per action: rule, action, forEach, target, params).
struct FrameLayout {
  int fact_count = 0;
  int param_count = 0;
  int fact_slot(int fact) const { return fact; }
  int param_slot(int param) const { return fact_count + param; }
  int snapshot_slot() const { return fact_count + param_count; }
  int now_slot() const { return fact_count + param_count + 1; }
  int fixed_slots() const { return fact_count + param_count + 2; }
  int decision_rules_slot() const { return fixed_slots(); }
  int decision_actions_slot() const { return fixed_slots() + 1; }
  int decision_steps_slot() const { return fixed_slots() + 2; }
  int invariant_fixed_slots() const { return fixed_slots() + 3; }
};

}  // namespace ruleplane
