// ResetDataDir: the data directory moved aside (never deleted) and made
// again, empty. Done when it is an empty directory.
#include <chrono>
#include <filesystem>

#include "actions/local/local_action_handler.h"
#include "adapters/local/atomic_file.h"
#include "adapters/local/file_operations.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& /*step*/, LocalActionContext& context, RequestLog& /*log*/) {
  return IsEmptyDirectory(context.member.data_dir);
}

Status Perform(const PlanStep& /*step*/, LocalActionContext& context, RequestLog& log) {
  const std::string& data_dir = context.member.data_dir;
  std::error_code error;
  if (std::filesystem::exists(data_dir, error) && !IsEmptyDirectory(data_dir)) {
    auto moved = MoveAside(data_dir, std::chrono::system_clock::now(), log);
    if (!moved.ok()) return moved.error();
  }
  return MakeDirectory(data_dir, log);
}

}  // namespace

LocalActionHandler ResetDataDirHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
