// Incremental ("delta") snapshots in etcd-backup-restore's format: the JSON
// array of watch events that its snapshotter marshals with Go's
// encoding/json, followed by the SHA-256 of that JSON (32 bytes). See
// ../shared/COMPONENTS.md and etcd-backup-restore pkg/snapshot/snapshotter.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "adapters/etcd/etcd_client.h"
#include "engine/common/error.h"

namespace ruleplane {

// Parses a decompressed delta file, verifying its trailing SHA-256 first.
// kParse naming the byte offset, or "checksum mismatch". The events' receive
// times are not returned: replay does not need them.
Result<std::vector<EtcdEvent>> ParseDelta(std::string_view bytes);

// The bytes etcd-backup-restore would write for these events, each with
// `received_at` (RFC 3339 with nanoseconds, as Go's time.Time marshals): byte
// for byte what Go's json.Marshal of []*event prints, then the SHA-256.
std::string SerializeDelta(const std::vector<EtcdEvent>& events, std::string_view received_at);

// Events grouped by their source revision (kv.mod_revision), in order: one
// transaction per group replays the source's transactions.
struct RevisionGroup {
  int64_t revision = 0;
  std::vector<EtcdEvent> events;
};
std::vector<RevisionGroup> GroupByRevision(const std::vector<EtcdEvent>& events);

}  // namespace ruleplane
