// ControllerShard: which Etcd objects one replica of `ruleplane controller`
// reconciles when several split them (--shard I/N). An Etcd belongs to shard
// FNV-1a-64("namespace/name") mod N: a hash fixed by its definition, so that
// replicas built by different compilers or versions agree on the split
// (std::hash promises no such thing). The replicas of one shard elect their
// leader through a Lease of the shard's own (LeaseName).
//
//   auto shard = ControllerShard::Parse("1/3");   // shard 1 of 3
//   if (shard.ok() && shard->Owns("shoot--dev/etcd-main")) queue.Add(...);
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/common/error.h"

namespace ruleplane {

// FNV-1a, 64 bits (offset basis 0xcbf29ce484222325, prime 0x100000001b3).
uint64_t Fnv1a64(std::string_view text);

class ControllerShard {
 public:
  ControllerShard() = default;  // the only shard: owns every key

  // "I/N" with 0 <= I < N; kInvalidArgument otherwise.
  static Result<ControllerShard> Parse(std::string_view text);

  int64_t index() const { return index_; }
  int64_t count() const { return count_; }
  // `key`: "namespace/name" of an Etcd.
  bool Owns(std::string_view key) const;
  // "<base>-shard-<I>-of-<N>": the Lease the shard's replicas elect through.
  std::string LeaseName(const std::string& base) const;

 private:
  int64_t index_ = 0;
  int64_t count_ = 1;
};

}  // namespace ruleplane
