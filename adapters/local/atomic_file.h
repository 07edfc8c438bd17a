// Writing files so that a crash leaves either the old or the new content,
// and "resetting" a directory by moving it aside, never deleting it.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "adapters/request.h"
#include "engine/common/error.h"
#include "platform/directory_sync.h"  // SyncDirectory, used with these

namespace ruleplane {

// Writes `content` to a new file ".<name>.tmp.XXXXXX" beside `path` (unique
// among writers: mkostemp), fsyncs it, renames it over `path`
// and fsyncs the directory. Records one Request (kFile "write", path, body =
// "<n> bytes"); in a dry run nothing is written. kIo naming the path on failure.
Status WriteFileAtomically(const std::string& path, std::string_view content, RequestLog& log);

// Writes what `produce` hands to its sink the same way, streaming; when
// `produce` or a write fails, the temporary file is removed and `path` is
// left as it was. Records one Request (kFile "write", path, body = `what`).
using StreamProducer = std::function<Status(const std::function<Status(std::string_view)>& sink)>;
Status WriteStreamAtomically(const std::string& path, const StreamProducer& produce, const std::string& what,
                             RequestLog& log);

// A new empty file "<directory>/.<stem>.XXXXXX" whose name no other process
// or thread gets (mkostemp): a download or a staged upload in a scratch
// directory that two members' containers (each PID 1) may share. kIo naming
// it when it cannot be created.
Result<std::string> CreateScratchFile(const std::string& directory, const std::string& stem);

// Removes the file at `path`, if there is one, when it goes out of scope: a
// scratch file is not left behind, whichever way its user returns.
class RemovedAtExit {
 public:
  explicit RemovedAtExit(std::string path) : path_(std::move(path)) {}
  ~RemovedAtExit();
  RemovedAtExit(const RemovedAtExit&) = delete;
  RemovedAtExit& operator=(const RemovedAtExit&) = delete;

 private:
  std::string path_;
};

// Copies `source` the same way (temporary file, fsync, rename, directory
// fsync), streaming: for snapshots of any size.
Status CopyFileAtomically(const std::string& source, const std::string& destination, RequestLog& log);

// Moves `source` to `destination` so that a crash leaves it whole at one of
// the two: fsync of the file, rename, fsync of the directory; across file
// systems, an atomic copy and then the source removed. Records one Request
// (kFile "move").
Status MoveFileDurably(const std::string& source, const std::string& destination, RequestLog& log);

// Renames `path` to "<base>.<UTC yyyymmddThhmmssZ>" (".<n>" appended when
// that exists; `base` is `path` unless given), fsyncs the parents, and
// returns the new path. Records one Request (kFile "rename", path, args {new
// path}). In a dry run, returns the name it would use.
Result<std::string> MoveAside(const std::string& path, std::chrono::system_clock::time_point now,
                              RequestLog& log, const std::string& base = "");

}  // namespace ruleplane
