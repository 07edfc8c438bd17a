// The table of LocalActionHandlers(): one entry per handler file in this
// folder, listed by the build into local_actions.inc as
// RULEPLANE_ACTION(<Action>).
#include "actions/local/local_action_handler.h"

namespace ruleplane {

#define RULEPLANE_ACTION(action) LocalActionHandler action##Handler();
#include "local_actions.inc"
#undef RULEPLANE_ACTION

const ActionHandlers<LocalActionContext>& LocalActionHandlers() {
  static const auto* const kHandlers = new ActionHandlers<LocalActionContext>{
#define RULEPLANE_ACTION(action) {#action, action##Handler()},
#include "local_actions.inc"
#undef RULEPLANE_ACTION
  };
  return *kHandlers;
}

}  // namespace ruleplane
