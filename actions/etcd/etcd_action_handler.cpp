// The table of EtcdActionHandlers(): one entry per handler file in this
// folder, listed by the build into etcd_actions.inc as
// RULEPLANE_ACTION(<Action>).
#include "actions/etcd/etcd_action_handler.h"

namespace ruleplane {

#define RULEPLANE_ACTION(action) EtcdActionHandler action##Handler();
#include "etcd_actions.inc"
#undef RULEPLANE_ACTION

const ActionHandlers<EtcdActionContext>& EtcdActionHandlers() {
  static const auto* const kHandlers = new ActionHandlers<EtcdActionContext>{
#define RULEPLANE_ACTION(action) {#action, action##Handler()},
#include "etcd_actions.inc"
#undef RULEPLANE_ACTION
  };
  return *kHandlers;
}

}  // namespace ruleplane
