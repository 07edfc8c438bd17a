// The table of BackupSidecarActionHandlers(): one entry per handler file in
// this folder, listed by the build into backup_sidecar_actions.inc as
// RULEPLANE_ACTION(<Action>).
#include "actions/backup_sidecar/backup_sidecar_action_handler.h"

namespace ruleplane {

#define RULEPLANE_ACTION(action) BackupSidecarActionHandler action##Handler();
#include "backup_sidecar_actions.inc"
#undef RULEPLANE_ACTION

const ActionHandlers<BackupSidecarActionContext>& BackupSidecarActionHandlers() {
  static const auto* const kHandlers = new ActionHandlers<BackupSidecarActionContext>{
#define RULEPLANE_ACTION(action) {#action, action##Handler()},
#include "backup_sidecar_actions.inc"
#undef RULEPLANE_ACTION
  };
  return *kHandlers;
}

}  // namespace ruleplane
