// SHA-256 (FIPS 180-4, OpenSSL's), for content digests of rule files and snapshots.
//
//   Sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#pragma once

#include <string>
#include <string_view>

namespace ruleplane {

// Lower-case hex SHA-256 of `data`.
std::string Sha256Hex(std::string_view data);
// The 32 raw bytes (the trailer of etcd's snapshot stream and of etcd-backup-restore's delta files).
std::string Sha256Digest(std::string_view data);

}  // namespace ruleplane
