// HashKV of one member: the hash of its key-value store up to a revision,
// equal on every member that has applied that revision. etcd 3.4's JSON
// gateway maps /v3/maintenance/hash to Hash (the whole database, revision
// ignored), so HashKV is asked through `etcdctl endpoint hashkv` (gRPC).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "engine/common/error.h"
#include "platform/http_client.h"

namespace ruleplane {

struct HashKvResult {
  uint32_t hash = 0;
  int64_t compact_revision = 0;
  int64_t revision = 0;  // the member's revision when it answered
};

// kOutOfRange-like failures (a compacted revision) and a member that does not
// answer are kUnavailable; etcdctl missing is kIo.
Result<HashKvResult> EndpointHashKV(const std::string& endpoint, int64_t revision, const TlsConfig& tls,
                                    std::chrono::milliseconds timeout);

}  // namespace ruleplane
