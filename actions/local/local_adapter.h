// LocalAdapter: the actions a member performs on its own files before etcd
// starts (the catalogue's `adapter: local` actions of the initialization
// tables): write or reuse the etcd configuration, move the data directory
// aside, restore a full snapshot, apply incremental snapshots, take a full
// snapshot into the backup store, abort the initialization.
//
// Data is never deleted: ResetDataDir renames the directory aside, a restore
// goes to a temporary directory and is renamed into place, the backup store
// writes a temporary file, fsyncs and renames.
//
// Each action is one handler, in a file of this folder named for it
// (local_action_handler.h).
#pragma once

#include <chrono>
#include <optional>

#include "actions/adapter.h"
#include "actions/local/local_action_context.h"
#include "adapters/etcd/etcd_client.h"
#include "adapters/local/backup_store.h"
#include "adapters/local/local_member.h"

namespace ruleplane {

class LocalAdapter : public Adapter {
 public:
  // `cluster` (may be null) is read when a joining member's configuration is
  // written (GenerateEtcdConfig with initialClusterState "existing").
  LocalAdapter(LocalMember member, BackupStore* store, EtcdClient* cluster);

  std::string_view kind() const override { return "local"; }
  Result<bool> IsDone(const PlanStep& step, RequestLog& log) override;
  Status Perform(const PlanStep& step, RequestLog& log) override;
  std::optional<std::chrono::milliseconds> PollInterval(const PlanStep& step) const override;

 private:
  LocalActionContext context_;
};

}  // namespace ruleplane
