// KubernetesActionHandler: the handler (actions/action_handler.h) of one
// catalogue action of `adapter: kubernetes`, one file each in this folder
// (scale_stateful_set.cpp performs ScaleStatefulSet). KubernetesAdapter looks
// the step's action up in KubernetesActionHandlers() and calls its handler
// with the plan's KubernetesActionContext: the client, the snapshot the plan
// was made from, the objects as the plan's own writes left them.
#pragma once

#include "actions/action_handler.h"
#include "actions/kubernetes/kubernetes_action_context.h"
#include "actions/step_params.h"
#include "adapters/request.h"
#include "engine/common/error.h"

namespace ruleplane {

using KubernetesActionHandler = ActionHandler<KubernetesActionContext>;

// Every handler of actions/kubernetes/, by action name.
const ActionHandlers<KubernetesActionContext>& KubernetesActionHandlers();

// The fence of a write to another object than the Etcd (the StatefulSet,
// Pods, Leases, the ConfigMap, the budget, Services, Jobs) that rests on the
// Etcd's spec as observed: kConflict unless the Etcd is the one observed, at
// the generation observed, read now (the Etcd's own writes are fenced by its
// resourceVersion).
inline Status EtcdSpecAsObserved(KubernetesActionContext& context, RequestLog& log) {
  return context.CheckEtcdAsObserved(log);
}

}  // namespace ruleplane
