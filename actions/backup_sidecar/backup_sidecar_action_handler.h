// BackupSidecarActionHandler: the handler (actions/action_handler.h) of one
// catalogue action of `adapter: backup-sidecar`, one file each in this folder
// (trigger_full_snapshot.cpp performs TriggerFullSnapshot).
// BackupSidecarAdapter looks the step's action up in
// BackupSidecarActionHandlers() and calls its handler with the snapshot the
// plan was made from and the way to the sidecar (BackupSidecarActionContext).
#pragma once

#include "actions/action_handler.h"
#include "actions/backup_sidecar/backup_sidecar_action_context.h"
#include "actions/step_params.h"

namespace ruleplane {

using BackupSidecarActionHandler = ActionHandler<BackupSidecarActionContext>;

// Every handler of actions/backup_sidecar/, by action name.
const ActionHandlers<BackupSidecarActionContext>& BackupSidecarActionHandlers();

}  // namespace ruleplane
