#include "member/member_init.h"

#include "actions/etcd/etcd_adapter.h"
#include "actions/local/local_adapter.h"

namespace ruleplane {

Result<MemberInitDecision> DecideMemberInit(
    const MemberObservationSources& sources,
    const std::vector<std::shared_ptr<const CompiledRuleSet>>& rule_sets, const ActionCatalogue* catalogue) {
  auto snapshot = ObserveMemberNow(sources);
  if (!snapshot.ok()) {
    return Error{
        snapshot.error().code, "observing " + sources.member.name + ": " + snapshot.error().message, {}};
  }
  auto plan = MakePlan(rule_sets, *snapshot, {}, catalogue);
  if (!plan.ok()) return plan.error();
  return MemberInitDecision{std::move(*snapshot), std::move(*plan)};
}

ExecutionReport ExecuteMemberInit(const MemberInitDecision& decision, const MemberObservationSources& sources,
                                  const std::vector<std::shared_ptr<const CompiledRuleSet>>& rule_sets,
                                  const MemberInitExecution& execution) {
  const std::string self = sources.member.name;
  ExecutorOptions options;
  options.dry_run = execution.dry_run;
  options.command = "member-init";
  options.subject = self;
  options.gate = [self](const PlanStep& step) {
    if (step.target != self) {
      return GateDecision{true, false, "member-init acts on its own member (" + self + ") only"};
    }
    return GateDecision{false, true, "a member's own initialization"};
  };
  if (execution.step_deadline.count() > 0) options.retry.step_deadline = execution.step_deadline;
  AdapterSet adapters;
  LocalAdapter local(sources.member, sources.store, sources.cluster);
  adapters.Add(&local);
  std::unique_ptr<EtcdAdapter> etcd;
  if (sources.cluster != nullptr) {
    etcd = std::make_unique<EtcdAdapter>(*sources.cluster);
    adapters.Add(etcd.get());
  }
  Executor executor(adapters, execution.journal, options);
  return executor.Run(decision.plan, decision.snapshot, rule_sets, {});
}

std::vector<std::string> MemberInitAdapterKinds() { return {"local", "etcd"}; }

}  // namespace ruleplane
