#include "actions/local/local_action_context.h"

#include <filesystem>

#include "adapters/local/snapshot_file.h"

namespace ruleplane {

Result<int64_t> DataDirRevision(const LocalActionContext& context) {
  const std::string db = context.member.data_dir + "/member/snap/db";
  if (!std::filesystem::exists(db)) return int64_t{0};
  return SnapshotFileRevision(db, context.member.command_timeout);
}

Result<bool> StoreListsForDataDir(const LocalActionContext& context,
                                  const std::function<bool(const StoredSnapshot&, int64_t)>& matches) {
  if (context.store == nullptr) return false;
  auto revision = DataDirRevision(context);
  if (!revision.ok() || *revision == 0) return false;
  auto listing = context.store->List();
  if (!listing.ok()) return listing.error();
  for (const StoredSnapshot& snapshot : listing->snapshots) {
    if (matches(snapshot, *revision)) return true;
  }
  return false;
}

Result<bool> DataDirHoldsSnapshot(const LocalActionContext& context, const std::string& name) {
  return StoreListsForDataDir(context, [&name](const StoredSnapshot& snapshot, int64_t revision) {
    return snapshot.name == name && revision >= snapshot.last_revision;
  });
}

}  // namespace ruleplane
