// The table of KubernetesActionHandlers(): one entry per handler file in this
// folder, listed by the build into kubernetes_actions.inc as
// RULEPLANE_ACTION(<Action>).
#include "actions/kubernetes/kubernetes_action_handler.h"

namespace ruleplane {

#define RULEPLANE_ACTION(action) KubernetesActionHandler action##Handler();
#include "kubernetes_actions.inc"
#undef RULEPLANE_ACTION

const ActionHandlers<KubernetesActionContext>& KubernetesActionHandlers() {
  static const auto* const kHandlers = new ActionHandlers<KubernetesActionContext>{
#define RULEPLANE_ACTION(action) {#action, action##Handler()},
#include "kubernetes_actions.inc"
#undef RULEPLANE_ACTION
  };
  return *kHandlers;
}

}  // namespace ruleplane
