// SnapshotProjection: parses a snapshot's JSON text into only the Values that
// a list of rule sets can read, for planning at the speed of the matcher.
// What they can read is found once, from their checked expressions
// (engine/expr/access_tree.h): facts, domains, cells, conditions and the
// actions' forEach, target and params. The rest of the text is validated
// (simdjson) and digested, but never built.
//
//   auto projection = SnapshotProjection::For(rule_sets);
//   auto plan = PlanText(projection, rule_sets, json_text, {}, catalogue);
//
// A projected snapshot is for planning only: acting and journaling need the
// whole document (ParseSnapshot).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "engine/common/error.h"
#include "engine/common/snapshot.h"
#include "engine/match/compiled_rule_set.h"
#include "engine/plan/plan.h"

namespace ruleplane {

namespace expr {
struct AccessTree;
}

class SnapshotProjection {
 public:
  SnapshotProjection() = default;  // keeps the whole document
  static SnapshotProjection For(const std::vector<std::shared_ptr<const CompiledRuleSet>>& rule_sets);

  // The snapshot with only the projected parts in `document`; `digest` is
  // that of the whole text, as ParseSnapshot's. Errors are ParseSnapshot's:
  // on any text the fast parser does not take (bad JSON, integers beyond 64
  // bits, nesting deeper than 512), the text goes to ParseSnapshot.
  Result<Snapshot> Parse(std::string_view json_text) const;

  // The projected document's shape, for tests: "{etcd: {metadata: {name}}, ...}".
  std::string DebugString() const;

 private:
  std::shared_ptr<const expr::AccessTree> tree_;
};

// What planning with `compiled` can read of a snapshot, normalized, as For
// builds it for several rule sets; engine/verify/conformance.h compares it
// with what a process's observer writes.
std::unique_ptr<expr::AccessTree> SnapshotReads(const CompiledRuleSet& compiled);

// MakePlan on `projected`, parsed from `json_text` by a projection for (at
// least) `rule_sets`. When that plan has an error or a hit-policy violation,
// the whole snapshot is planned instead, so that the messages quote the
// values as they are.
Result<Plan> PlanProjected(const std::vector<std::shared_ptr<const CompiledRuleSet>>& rule_sets,
                           const Snapshot& projected, std::string_view json_text,
                           const EvaluationOptions& options, const ActionCatalogue* catalogue);

// PlanProjected on projection.Parse(json_text).
Result<Plan> PlanText(const SnapshotProjection& projection,
                      const std::vector<std::shared_ptr<const CompiledRuleSet>>& rule_sets,
                      std::string_view json_text, const EvaluationOptions& options,
                      const ActionCatalogue* catalogue);

}  // namespace ruleplane
