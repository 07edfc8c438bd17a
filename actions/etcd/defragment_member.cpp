// DefragmentMember (name, endpoint): /v3/maintenance/defragment on the
// member's client URL. Never found done here: whether a member needs it is
// the rules' decision (its dbSize - dbSizeInUse against their threshold), and
// a defragmentation changes no key.
#include "actions/etcd/etcd_action_handler.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& /*step*/, EtcdActionContext& /*context*/, RequestLog& /*log*/) {
  return false;
}

Status Perform(const PlanStep& step, EtcdActionContext& context, RequestLog& log) {
  auto endpoint = EndpointOfStep(step, context.members);
  if (!endpoint.ok()) return endpoint.error();
  return context.client.Defragment(*endpoint, log);
}

}  // namespace

EtcdActionHandler DefragmentMemberHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
