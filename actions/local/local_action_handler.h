// LocalActionHandler: the handler (actions/action_handler.h) of one catalogue
// action of `adapter: local`, one file each in this folder
// (reset_data_dir.cpp performs ResetDataDir). LocalAdapter looks the step's
// action up in LocalActionHandlers() and calls its handler with the member
// and its stores (LocalActionContext).
#pragma once

#include "actions/action_handler.h"
#include "actions/local/local_action_context.h"
#include "actions/step_params.h"

namespace ruleplane {

using LocalActionHandler = ActionHandler<LocalActionContext>;

// Every handler of actions/local/, by action name.
const ActionHandlers<LocalActionContext>& LocalActionHandlers();

}  // namespace ruleplane
