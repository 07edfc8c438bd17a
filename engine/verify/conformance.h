// Conformance: whether a process can carry out what the rule sets it loads
// decide. Every action a rule can plan must have an adapter of its
// catalogue kind in that process, and every snapshot path a rule set reads
// must be one the process's observer writes (params come from the command
// line, not the snapshot). A rule set that plans what nobody executes, or
// reads what nobody observes, decides for nothing: both are errors.
//
//   auto shape = ParseObservedShape("{kind, etcd: *, leases: [*]}");
//   ProcessProfile controller{"controller", "EtcdCluster", {"kubernetes"}, *shape};
//   for (const ConformanceFinding& finding : CheckConformance(compiled, catalogue, controller)) ...
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/error.h"
#include "engine/match/compiled_rule_set.h"
#include "engine/rule_file/action_catalogue.h"

namespace ruleplane {

// What an observer writes into its snapshots: the keys of each map it builds,
// down to where it copies an object as another component returned it (open:
// any key below is as good as that component's). Written as text:
//   shape  := "*" | "{" [field ("," field)*] "}" | "[" shape "]"
//   field  := name ["?"] [":" shape]  (a name alone: a scalar; "?": not always written)
struct ObservedShape {
  bool open = false;
  bool optional = false;  // as a field: absent from some snapshots
  std::map<std::string, ObservedShape, std::less<>> fields;
  std::shared_ptr<const ObservedShape> element;  // a list's elements
};

// kParse naming the offset and what was expected.
Result<ObservedShape> ParseObservedShape(std::string_view text);

// Where a snapshot an observer wrote and its declared shape differ, both ways:
// "snapshot.a.b is written but not declared", "snapshot.c is declared but not
// written". A null value matches any shape (a source that did not answer).
std::vector<std::string> ShapeMismatches(const Value& document, const ObservedShape& shape);

// One process that loads rule sets: which subject's (spec.subject), the
// adapter kinds it registers, and what its observer writes.
struct ProcessProfile {
  std::string name;  // "controller", "member-init"
  std::string subject;
  std::vector<std::string> adapter_kinds;
  ObservedShape observed;
};

struct ConformanceFinding {
  SourcePosition position;  // where the rule set plans the action or reads the path
  std::string message;      // names the rule set, the action or path, and the process
};

// Empty when `profile` loads other subjects' rule sets or conforms.
std::vector<ConformanceFinding> CheckConformance(const CompiledRuleSet& compiled,
                                                 const ActionCatalogue& catalogue,
                                                 const ProcessProfile& profile);

}  // namespace ruleplane
