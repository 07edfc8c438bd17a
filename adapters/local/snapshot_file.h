// etcd's snapshot files: a bbolt database followed by its SHA-256 (the
// stream /v3/maintenance/snapshot sends and `etcdctl snapshot save` writes).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "engine/common/error.h"

namespace ruleplane {

// The revision a snapshot file or a member's database holds, as `etcdctl
// snapshot status -w json` reads it. kIo when etcdctl cannot read the file.
Result<int64_t> SnapshotFileRevision(const std::string& path, std::chrono::milliseconds timeout);

// Writes `database` (a stopped member's member/snap/db) followed by its
// SHA-256 to `destination`: the snapshot stream etcd would send.
Status WriteSnapshotStream(const std::string& database, const std::string& destination);

}  // namespace ruleplane
