#include "adapters/local/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

namespace ruleplane {
namespace {

namespace fs = std::filesystem;

Error IoError(const std::string& what, const std::string& path) {
  return Error{ErrorCode::kIo, what + " " + path + ": " + std::strerror(errno), {}};
}

// A new file "<directory>/.<stem>.XXXXXX", its name unique among processes
// and threads (mkostemp): two containers are both PID 1, and two threads of
// one process share a PID. A dot file whose name is not a snapshot's:
// listings never take it for one. Returns its descriptor and fills `path`.
int CreateUnique(const std::string& directory, const std::string& stem, std::string& path) {
  std::string pattern = (fs::path(directory) / ("." + stem + ".XXXXXX")).string();
  const int fd = mkostemp(pattern.data(), O_CLOEXEC);
  path = pattern;
  return fd;
}

Status WriteAll(int fd, const char* data, size_t size, const std::string& path) {
  while (size > 0) {
    const ssize_t written = write(fd, data, size);
    if (written < 0) {
      if (errno == EINTR) continue;
      return IoError("cannot write", path);
    }
    data += written;
    size -= static_cast<size_t>(written);
  }
  return {};
}

// Writes through `fill` into a temporary file, fsyncs it and renames it over `path`.
template <typename Fill>
Status ReplaceFile(const std::string& path, Fill fill) {
  std::string temporary;
  const int fd = CreateUnique(fs::path(path).parent_path().string(),
                              fs::path(path).filename().string() + ".tmp", temporary);
  if (fd < 0) return IoError("cannot create", temporary);
  Status status = fill(fd, temporary);
  if (status.ok() && fsync(fd) != 0) status = IoError("cannot fsync", temporary);
  if (close(fd) != 0 && status.ok()) status = IoError("cannot close", temporary);
  if (status.ok() && rename(temporary.c_str(), path.c_str()) != 0) status = IoError("cannot rename to", path);
  if (!status.ok()) {
    unlink(temporary.c_str());  // our own partial copy
    return status;
  }
  return SyncDirectory(fs::path(path).parent_path().string());
}

}  // namespace

Result<std::string> CreateScratchFile(const std::string& directory, const std::string& stem) {
  std::string path;
  const int fd = CreateUnique(directory, stem, path);
  if (fd < 0) return IoError("cannot create", path);
  close(fd);
  return path;
}

RemovedAtExit::~RemovedAtExit() {
  std::error_code ignored;
  fs::remove(path_, ignored);
}

Status WriteFileAtomically(const std::string& path, std::string_view content, RequestLog& log) {
  if (!log.Record(Request{
          Request::Kind::kFile, "write", path, {}, std::to_string(content.size()) + " bytes", true})) {
    return {};
  }
  return ReplaceFile(path, [&](int fd, const std::string& temporary) {
    return WriteAll(fd, content.data(), content.size(), temporary);
  });
}

Status WriteStreamAtomically(const std::string& path, const StreamProducer& produce, const std::string& what,
                             RequestLog& log) {
  if (!log.Record(Request{Request::Kind::kFile, "write", path, {}, what, true})) return {};
  return ReplaceFile(path, [&](int fd, const std::string& temporary) {
    return produce(
        [&](std::string_view piece) { return WriteAll(fd, piece.data(), piece.size(), temporary); });
  });
}

Status CopyFileAtomically(const std::string& source, const std::string& destination, RequestLog& log) {
  if (!log.Record(Request{Request::Kind::kFile, "copy", source, {destination}, "", true})) return {};
  const int in = open(source.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return IoError("cannot open", source);
  Status status = ReplaceFile(destination, [&](int fd, const std::string& temporary) -> Status {
    char buffer[1 << 16];
    while (true) {
      const ssize_t got = read(in, buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return IoError("cannot read", source);
      if (got == 0) return {};
      if (Status written = WriteAll(fd, buffer, static_cast<size_t>(got), temporary); !written.ok())
        return written;
    }
  });
  close(in);
  return status;
}

Status MoveFileDurably(const std::string& source, const std::string& destination, RequestLog& log) {
  if (!log.Record(Request{Request::Kind::kFile, "move", source, {destination}, "", true})) return {};
  const int fd = open(source.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open", source);
  const bool synced = fsync(fd) == 0;
  close(fd);
  if (!synced) return IoError("cannot fsync", source);
  if (rename(source.c_str(), destination.c_str()) != 0) {
    if (errno != EXDEV) return IoError("cannot rename to " + destination + ":", source);
    RequestLog inner;
    if (Status copied = CopyFileAtomically(source, destination, inner); !copied.ok()) return copied;
    std::error_code ignored;
    fs::remove(source, ignored);  // copied whole and synced: the source is a duplicate now
    return {};
  }
  return SyncDirectory(fs::path(destination).parent_path().string());
}

Result<std::string> MoveAside(const std::string& path, std::chrono::system_clock::time_point now,
                              RequestLog& log, const std::string& base) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  const std::string prefix = (base.empty() ? path : base) + "." + stamp;
  std::string aside = prefix;
  std::error_code ignored;
  for (int n = 2; fs::exists(aside, ignored) || fs::is_symlink(aside, ignored); ++n) {
    aside = prefix + "." + std::to_string(n);
  }
  if (!log.Record(
          Request{Request::Kind::kFile, "rename", path, {aside}, "moved aside, never deleted", true})) {
    return aside;
  }
  if (rename(path.c_str(), aside.c_str()) != 0) return IoError("cannot move aside", path);
  for (const fs::path& parent : {fs::path(path).parent_path(), fs::path(aside).parent_path()}) {
    if (Status synced = SyncDirectory(parent.string()); !synced.ok()) return synced.error();
  }
  return aside;
}

}  // namespace ruleplane
