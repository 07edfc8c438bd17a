// LocalActionContext: what every local action handler
// (local_action_handler.h) is given: the member this process initializes and
// where its files are, the backup store, and the cluster it joins.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "adapters/etcd/etcd_client.h"
#include "adapters/local/backup_store.h"
#include "adapters/local/local_member.h"
#include "engine/common/error.h"

namespace ruleplane {

struct LocalActionContext {
  LocalMember member;
  BackupStore* store = nullptr;   // null when none is configured: the backup actions refuse
  EtcdClient* cluster = nullptr;  // null when none is known (see GenerateEtcdConfig)
};

// The revision of the member's database (its data directory's
// member/snap/db), 0 when there is none.
Result<int64_t> DataDirRevision(const LocalActionContext& context);

// Whether the backup store lists a snapshot for which `matches(snapshot,
// revision)` holds, `revision` being the member database's: false with no
// store or no database.
Result<bool> StoreListsForDataDir(const LocalActionContext& context,
                                  const std::function<bool(const StoredSnapshot&, int64_t)>& matches);

// Whether the member's database holds the stored snapshot `name`'s last revision.
Result<bool> DataDirHoldsSnapshot(const LocalActionContext& context, const std::string& name);

}  // namespace ruleplane
