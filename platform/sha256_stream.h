// SHA-256 over data that arrives in pieces (a snapshot streamed from etcd, a
// file read in chunks), through OpenSSL, which uses the CPU's SHA
// instructions where it has them. engine/common/sha256.h digests whole
// strings for the engine, which links no OpenSSL.
//
//   Sha256Stream hash;
//   hash.Update(first);  hash.Update(second);
//   std::string digest = hash.Finish();   // 32 raw bytes
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "engine/common/error.h"

namespace ruleplane {

class Sha256Stream {
 public:
  Sha256Stream();
  ~Sha256Stream();
  Sha256Stream(const Sha256Stream&) = delete;
  Sha256Stream& operator=(const Sha256Stream&) = delete;

  void Update(std::string_view data);
  std::string Finish();  // the 32 raw bytes; the object is spent

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

// Feeds the stream of an etcd snapshot (database, then the SHA-256 of the
// database) piece by piece and checks the trailer at the end, without
// holding the file: the last 32 bytes seen are kept back from the hash.
class SnapshotTrailerCheck {
 public:
  void Update(std::string_view data);
  // kIo "checksum mismatch" or "too short", naming `what`.
  Status Finish(const std::string& what);

 private:
  Sha256Stream hash_;
  std::string tail_;  // the last (at most) 32 bytes, not hashed yet
};

}  // namespace ruleplane
