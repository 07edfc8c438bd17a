// EtcdActionHandler: the handler (actions/action_handler.h) of one catalogue
// action of `adapter: etcd`, one file each in this folder (add_member.cpp
// performs AddMember). EtcdAdapter reads the member list, looks the step's
// action up in EtcdActionHandlers() and calls its handler with both
// (EtcdActionContext).
#pragma once

#include "actions/action_handler.h"
#include "actions/etcd/etcd_action_context.h"
#include "actions/etcd/step_member.h"
#include "actions/step_params.h"

namespace ruleplane {

using EtcdActionHandler = ActionHandler<EtcdActionContext>;

// Every handler of actions/etcd/, by action name.
const ActionHandlers<EtcdActionContext>& EtcdActionHandlers();

}  // namespace ruleplane
