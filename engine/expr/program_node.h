// The checked, evaluable tree of a Program (internal to the expression engine).
//
// Check turns each AstNode into a Node whose names are frame slots and whose
// calls are resolved function overloads, so evaluation is a switch over node kinds with no
// lookups by name.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/common/value.h"
#include "engine/expr/ast.h"
#include "engine/expr/expression.h"
#include "engine/expr/regex.h"

namespace ruleplane::expr {

enum class Builtin : uint8_t {
  kSize,
  kStartsWith,
  kEndsWith,
  kContains,
  kMatches,
  kInt,
  kDouble,
  kString,
  kTimestamp,
  kDuration,
  // CEL's strings extension (engine/string_functions.h).
  kSplit,
  kSubstring,
  kIndexOf,
  kLastIndexOf,
  kLowerAscii,
  kUpperAscii,
  kReplace,
  kTrim,
  kJoin,
  // ruleplane's own (engine/cron_schedule.h, engine/backup_listing.h).
  kCronNext,
  kBackups,
  kParseBackupName,
  // cel-go's ext.Lists.
  kListsRange,
  // cel-go's ext.Math.
  kMathGreatest,
};

struct FunctionSignature;  // engine/functions.h
class CronSchedule;        // engine/cron_schedule.h

struct Node {
  enum class Kind : uint8_t {
    kConstant,       // value
    kSlot,           // frame[slot]
    kSelect,         // children[0].field
    kHas,            // has(children[0].field)
    kIndex,          // children[0][children[1]]
    kList,           // [children...]
    kMap,            // {children[0]: children[1], ...}
    kUnary,          // op children[0]
    kBinary,         // children[0] op children[1]
    kAnd,            // children[0] && children[1]
    kOr,             // children[0] || children[1]
    kConditional,    // children[0] ? children[1] : children[2]
    kCall,           // function(children...), the receiver first
    kComprehension,  // macro over children[0]: [range, predicate] or [range, filter, transform]
  };

  explicit Node(Kind k) : kind(k) {}

  Kind kind;
  Operator op = Operator::kAdd;
  const FunctionSignature* function = nullptr;  // kCall: the overload Check chose
  MacroKind macro = MacroKind::kAll;
  int slot = -1;                                 // kSlot; kComprehension: the (first) loop variable
  int second_slot = -1;                          // kComprehension with two variables: the value
  Value value;                                   // kConstant
  std::string field;                             // kSelect, kHas
  std::shared_ptr<const Regex> regex;            // kCall matches() with a constant pattern
  std::shared_ptr<const CronSchedule> schedule;  // kCall cronNext() with a constant schedule
  std::vector<std::unique_ptr<Node>> children;
};

// Evaluates a checked tree. `frame` must hold every slot the tree uses.
Value EvaluateNode(const Node& node, Frame& frame, const Limits& limits, Budget* budget);

}  // namespace ruleplane::expr
