// The compressions etcd-backup-restore writes snapshots with (its
// compressionPolicy: gzip, zlib, lzw), told by the file name's suffix.
#pragma once

#include <string>
#include <string_view>

#include "engine/common/error.h"

namespace ruleplane {

// ".gz", ".zlib", ".Z", or "" for none; kInvalidArgument otherwise.
Result<std::string> Decompress(std::string_view data, std::string_view suffix);
Result<std::string> Compress(std::string_view data, std::string_view suffix);

// The compression suffix a snapshot name ends with ("" when none).
std::string_view CompressionSuffix(std::string_view name);

}  // namespace ruleplane
