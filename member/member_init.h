// member-init: what an etcd member's init container does before etcd starts.
// Observe this member (its data directory, the backup store, the cluster's
// member list, the Etcd), plan with the initialization rules, and execute the
// plan on this member only, through the local and etcd adapters, journaled.
// A step aimed at another member is refused: a member initializes itself.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "engine/match/compiled_rule_set.h"
#include "engine/plan/plan.h"
#include "engine/rule_file/action_catalogue.h"
#include "execution/executor.h"
#include "execution/journal.h"
#include "observers/member_observer.h"

namespace ruleplane {

// What this member's observation decides: the snapshot and its plan. An
// error when the member could not be observed ("observing NAME: ...") or no
// plan could be made; nothing is changed either way.
struct MemberInitDecision {
  Snapshot snapshot;
  Plan plan;
};
Result<MemberInitDecision> DecideMemberInit(
    const MemberObservationSources& sources,
    const std::vector<std::shared_ptr<const CompiledRuleSet>>& rule_sets, const ActionCatalogue* catalogue);

struct MemberInitExecution {
  Journal* journal = nullptr;  // null in a dry run: a dry run changes nothing, the journal included
  bool dry_run = false;
  std::chrono::seconds step_deadline{0};  // 0: the executor's default
};

// Executes the decision's plan on this member only (a step aimed at another
// member is refused), through the local adapter and, when the cluster is
// known, the etcd adapter; what happened, step by step.
ExecutionReport ExecuteMemberInit(const MemberInitDecision& decision, const MemberObservationSources& sources,
                                  const std::vector<std::shared_ptr<const CompiledRuleSet>>& rule_sets,
                                  const MemberInitExecution& execution);

// The adapter kinds ExecuteMemberInit registers (etcd's when the cluster is
// known), for the conformance check (cli/process_profiles.h).
std::vector<std::string> MemberInitAdapterKinds();

}  // namespace ruleplane
