#include "actions/local/local_action_context.h"

#include <filesystem>

#include "adapters/local/snapshot_file.h"

namespace ruleplane {

Result<int64_t> DataDirRevision(const LocalActionContext& context) {
  const std::string db = context.member.data_dir + "/member/snap/db";
  if (!std::filesystem::exists(db)) return int64_t{0};
  return SnapshotFileRevision(db, context.member.command_timeout);
}

}  // namespace ruleplane
