// The compressions etcd-backup-restore writes snapshots with (its
// compressionPolicy: gzip, zlib, lzw), told by the file name's suffix.
//
// Decompression streams: the input is read in 64 KiB pieces and the output
// handed on as it comes, with two bounds checked while it streams (a gzip
// "bomb" of 2 MB would otherwise become 2 GB, an LZW one of 0.8 MB 4 GB):
//   - an absolute size: DecompressionLimits::max_bytes (kMaxDeltaFileBytes,
//     128 MiB, for a delta; kMaxFullSnapshotBytes, 32 GiB, for a full
//     snapshot, which is streamed to disk and never held in memory);
//   - a ratio: once the output passes kRatioFloorBytes (16 MiB), it may be
//     at most kMaxCompressionRatio (200) times the input read so far (gzip
//     reaches ~1,000, LZW ~5,000 on crafted input; etcd databases and deltas
//     compress far less).
// A file over either bound is refused with an error naming it and the bound.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "engine/common/error.h"
#include "platform/file_input.h"

namespace ruleplane {

inline constexpr int64_t kMaxFullSnapshotBytes = int64_t{32} << 30;
inline constexpr int64_t kMaxCompressionRatio = 200;
inline constexpr int64_t kRatioFloorBytes = int64_t{16} << 20;

struct DecompressionLimits {
  int64_t max_bytes = kMaxDeltaFileBytes;
  int64_t max_ratio = kMaxCompressionRatio;
  int64_t ratio_floor_bytes = kRatioFloorBytes;
};

// ".gz", ".zlib", ".Z", or "" for none; kInvalidArgument otherwise, kParse
// for data that is not valid, kIo naming the bound it passed.
Result<std::string> Decompress(std::string_view data, std::string_view suffix,
                               const DecompressionLimits& limits = {});
// What `source` hands to the ChunkSink it is given (a compressed object,
// piece by piece), decompressed into `sink`, streaming, within `limits`.
Status DecompressStream(std::string_view suffix, const DecompressionLimits& limits,
                        const std::function<Status(const ChunkSink&)>& source, const ChunkSink& sink);
// The regular file `path` (never through a symbolic link), decompressed
// into `sink`; errors name the path.
Status DecompressFile(const std::string& path, std::string_view suffix, const DecompressionLimits& limits,
                      const ChunkSink& sink);

Result<std::string> Compress(std::string_view data, std::string_view suffix);
// The regular file `path` compressed (".gz" or ".zlib") into `sink`, streaming.
Status CompressFile(const std::string& path, std::string_view suffix, const ChunkSink& sink);

// The compression suffix a snapshot name ends with ("" when none).
std::string_view CompressionSuffix(std::string_view name);

}  // namespace ruleplane
