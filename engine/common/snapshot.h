// Snapshot: one observation of a subject (an etcd cluster, a member at start-up),
// as a JSON document holding the objects exactly as their APIs return them.
//
//   {"apiVersion": "ruleplane.dev/v1", "kind": "EtcdClusterSnapshot",
//    "observedAt": "2024-05-01T10:00:00Z", "params": {...}, "etcd": {...}, ...}
//
// observedAt is the only clock: every time comparison is against it.
#pragma once

#include <string>
#include <string_view>

#include "engine/common/error.h"
#include "engine/common/value.h"

namespace ruleplane {

struct Snapshot {
  std::string kind;  // e.g. "EtcdClusterSnapshot"
  Timestamp observed_at;
  Value document;  // the whole document, bound to `snapshot` in expressions
  Value params;    // the document's "params" map, or null
  // "sha256:<hex>" of the JSON text as observed (ParseSnapshot), or of the
  // document's compact JSON (SnapshotFromValue).
  std::string digest;

  // "EtcdClusterSnapshot" -> "EtcdCluster", the rule files' spec.subject.
  std::string subject() const;
};

// Parses JSON text. Bad JSON: kParse naming the byte offset and what was
// expected. A missing or wrong apiVersion, kind or observedAt: kInvalidSnapshot
// naming the field.
Result<Snapshot> ParseSnapshot(std::string_view json_text);

// Validates an already parsed document (inline test snapshots).
Result<Snapshot> SnapshotFromValue(Value document);

// The checks of SnapshotFromValue, without the digest: for parsers that
// digest the text they were given.
Result<Snapshot> ValidateSnapshot(Value document);

}  // namespace ruleplane
