// Reading input files with a stated bound: every whole-file read of the
// adapters and the CLI goes through ReadRegularFile, and every streamed read
// of a file someone else wrote opens it with OpenRegularFile.
//
// A path is opened with O_NONBLOCK (a FIFO does not block the open) and,
// when asked, O_NOFOLLOW (a symbolic link is refused); fstat must then say a
// regular file: a FIFO, a character device such as /dev/zero, a socket or a
// directory is refused by type before one byte is read. The size is checked
// on fstat and again while reading (a file that grows is cut at the bound
// and refused).
//
// Bounds (bytes), each named in the error that a larger file gets:
//   kMaxConfigFileBytes   16 MiB   the etcd configuration and its template,
//                                  the Etcd and Lease JSON of member-init,
//                                  the re-bootstrap record, safe-guard files
//   kMaxTokenFileBytes     1 MiB   a bearer token file
//   kMaxCliInputBytes    256 MiB   a CLI input: rule files, snapshots,
//                                  kubectl output, standard input
//   kMaxDeltaFileBytes   128 MiB   a delta snapshot, decompressed or not;
//                                  member-init --max-delta-bytes changes it
//                                  (etcd-backup-restore cuts its deltas at
//                                  100 MiB: --delta-snapshot-memory-limit)
// Streamed, never held whole: full snapshots (adapters/local/compression.h
// gives their decompression bounds), WAL segments (records of at most 1 MiB).
#pragma once

#include <cstdint>
#include <functional>
#include <istream>
#include <string>
#include <string_view>

#include "engine/common/error.h"

namespace ruleplane {

inline constexpr int64_t kMaxConfigFileBytes = int64_t{16} << 20;
inline constexpr int64_t kMaxTokenFileBytes = int64_t{1} << 20;
inline constexpr int64_t kMaxCliInputBytes = int64_t{256} << 20;
inline constexpr int64_t kMaxDeltaFileBytes = int64_t{128} << 20;

enum class Links { kFollow, kRefuse };

// An open, regular file (O_RDONLY | O_CLOEXEC, O_NONBLOCK cleared after the
// type check); the caller closes it. kNotFound when missing, kIo naming the
// path and what it is otherwise ("a FIFO, not a regular file", "a symbolic
// link, not followed").
Result<int> OpenRegularFile(const std::string& path, Links links = Links::kFollow);

// The whole content of a regular file of at most `max_bytes`; kIo
// naming the path and the bound when it is larger.
Result<std::string> ReadRegularFile(const std::string& path, int64_t max_bytes, Links links = Links::kFollow);

// At most `max_bytes` from a stream (standard input); kIo beyond.
Result<std::string> ReadBoundedStream(std::istream& in, int64_t max_bytes, std::string_view what);

// Receives data piece by piece (a file, an object, a decompressed
// snapshot); an error it returns stops the stream.
using ChunkSink = std::function<Status(std::string_view)>;

// A regular file's content handed to `sink` in 64 KiB pieces, streaming;
// kIo naming the path when it cannot be read, or the sink's error.
Status ReadFileInPieces(const std::string& path, Links links, const ChunkSink& sink);

// "16 MiB", "1.5 GiB", "300 bytes".
std::string FormatBytes(int64_t bytes);

}  // namespace ruleplane
