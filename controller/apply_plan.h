// `ruleplane apply`: one plan executed by hand through the Kubernetes adapter,
// with the journal, the fencing and the dry runs of the controller's
// reconcile but none of its gates, status or Events (the person running it
// decides; --allow-disruptive is theirs to give).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "adapters/kubernetes/kube_config.h"
#include "engine/common/snapshot.h"
#include "engine/match/compiled_rule_set.h"
#include "engine/plan/plan.h"
#include "execution/executor.h"
#include "execution/journal.h"

namespace ruleplane {

struct ApplyOptions {
  enum class DryRun { kNone, kClient, kServer };
  // kClient: every request is logged and none sent; kServer: the writes are
  // sent with dryRun=All (the API server validates them and stores nothing).
  DryRun dry_run = DryRun::kNone;
  bool allow_disruptive = false;
  // What a StatefulSet created or updated gives member-init as --rules.
  std::vector<std::string> member_init_rules;
};

// Executes `plan`, made from `snapshot` (an EtcdClusterSnapshot) with
// `rule_sets`, journaled under the subject "etcd NAMESPACE/NAME" so that a
// re-run for the same Etcd finds an interrupted one.
ExecutionReport ApplyPlan(const KubeConfig& kube, const Snapshot& snapshot, const Plan& plan,
                          const std::vector<std::shared_ptr<const CompiledRuleSet>>& rule_sets,
                          Journal* journal, const ApplyOptions& options);

}  // namespace ruleplane
