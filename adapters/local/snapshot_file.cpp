#include "adapters/local/snapshot_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/common/json_value.h"
#include "platform/file_input.h"
#include "platform/process.h"
#include "platform/sha256_stream.h"

namespace ruleplane {

namespace {

// etcdctl's messages that are about the file, not about etcdctl or the
// machine: bbolt's errors from opening it and etcd's integrity check.
bool SaysTheFileIsBad(const CommandResult& result) {
  if (result.exit_code == 1) {
    for (const char* verdict :
         {"invalid database", "version mismatch", "checksum error", "file size too small",
          "integrity check failed", "cannot get hash of bucket"}) {
      if (result.err.find(verdict) != std::string::npos) return true;
    }
    return false;
  }
  // Go exits 2 when it crashes: a panic or a fault (SIGBUS past the end of a
  // truncated file) inside bbolt walking the file's pages. Not "fatal error:
  // runtime: out of memory" and the like, which say nothing about the file.
  return result.exit_code == 2 && result.err.find("go.etcd.io/bbolt.") != std::string::npos &&
         (result.err.find("panic: ") != std::string::npos ||
          result.err.find("fatal error: fault") != std::string::npos);
}

// The first line of `text` that contains `marker`, or its first line.
std::string LineWith(const std::string& text, const std::string& marker) {
  const size_t found = text.find(marker);
  const size_t start = found == std::string::npos ? 0 : text.rfind('\n', found) + 1;
  return text.substr(start, text.find('\n', start) - start);
}

// Whether etcdctl's Go runtime crashed (a panic or a fault), as opposed to
// etcdctl saying in words what is wrong with the file.
bool GoCrashed(const CommandResult& result) { return result.exit_code == 2; }

// Reads the whole file with read(2), for the errno a failing disk gives. A
// fault inside bbolt is SIGBUS on its memory map: a page past the end of a
// truncated file raises it, and so does a page the disk cannot read.
Status ReadsWhole(const std::string& path) {
  auto fd = OpenRegularFile(path);
  if (!fd.ok()) return fd.error();
  std::string chunk(1 << 20, '\0');
  ssize_t got = 0;
  while ((got = read(*fd, chunk.data(), chunk.size())) != 0) {
    if (got < 0 && errno != EINTR) break;
  }
  const int read_error = got < 0 ? errno : 0;
  close(*fd);
  if (read_error != 0)
    return Error{ErrorCode::kIo, "could not read " + path + ": " + std::strerror(read_error), {}};
  return {};
}

// What etcdctl said about the file, in one line.
std::string Verdict(const CommandResult& result) {
  for (const char* marker : {"Error: ", "panic: ", "[signal "}) {
    if (result.err.find(marker) != std::string::npos) return LineWith(result.err, marker);
  }
  return LineWith(result.err, "");
}

}  // namespace

namespace {

// Whether another open file holds a flock on `path` that a shared lock
// conflicts with (bbolt locks its file with flock).
bool FileIsLocked(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool locked = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  close(fd);  // releases the shared lock taken, if any
  return locked;
}

}  // namespace

Result<DatabaseFileCheck> CheckDatabaseFile(const std::string& path, std::chrono::milliseconds timeout) {
  std::error_code error;
  const uintmax_t size = std::filesystem::file_size(path, error);
  if (error) {
    return Error{
        error == std::errc::no_such_file_or_directory ? ErrorCode::kNotFound : ErrorCode::kUnavailable,
        "cannot read the size of " + path + ": " + error.message(),
        {}};
  }
  DatabaseFileCheck check;
  if (size == 0) {
    // etcdctl would try to initialise it (read-only: "bad file descriptor").
    check.problem = "the file is empty, and a bbolt database never is";
    return check;
  }
  // A running etcd holds bbolt's exclusive lock on its database, and
  // etcdctl would wait for it until the timeout: say so at once instead.
  if (FileIsLocked(path)) {
    return Error{ErrorCode::kUnavailable,
                 path + " is locked by another process (a running etcd holds its database so); not checked",
                 {}};
  }
  auto result = RunCommand({"etcdctl", "snapshot", "status", path, "-w", "json"}, timeout);
  if (!result.ok()) return result.error();
  if (result->exit_code == 0) {
    auto status = ParseJson(result->out);
    const Value* revision = status.ok() ? status->Find("revision") : nullptr;
    if (revision == nullptr || !revision->is_int()) {
      return Error{ErrorCode::kUnavailable,
                   "etcdctl snapshot status " + path + " printed no revision: " + result->out,
                   {}};
    }
    check.opens = true;
    check.revision = revision->int_value();
    return check;
  }
  if (SaysTheFileIsBad(*result)) {
    // A crash is a verdict on the file only if the file can be read: an I/O
    // error is "could not read", and the data must stay where it is.
    if (GoCrashed(*result)) {
      if (auto readable = ReadsWhole(path); !readable.ok()) {
        return Error{
            ErrorCode::kUnavailable,
            readable.error().message + " (etcdctl crashed reading it: " + Verdict(*result) + "); not checked",
            {}};
      }
    }
    check.problem = Verdict(*result);
    return check;
  }
  return Error{ErrorCode::kUnavailable,
               "etcdctl snapshot status " + path +
                   (result->exit_code < 0 ? " was killed" : " exited " + std::to_string(result->exit_code)) +
                   " without a verdict on the file: " + LineWith(result->err, "Error: "),
               {}};
}

std::chrono::milliseconds DatabaseCheckTimeout(uintmax_t bytes) {
  constexpr uintmax_t kStep = 100'000'000;  // 100 MB
  const uintmax_t steps = (bytes + kStep - 1) / kStep;
  return std::chrono::minutes(2) + std::chrono::seconds(10) * static_cast<int64_t>(steps);
}

Result<int64_t> SnapshotFileRevision(const std::string& path, std::chrono::milliseconds timeout) {
  auto check = CheckDatabaseFile(path, timeout);
  if (!check.ok()) return check.error();
  if (!check->opens)
    return Error{ErrorCode::kIo, "etcdctl snapshot status " + path + ": " + check->problem, {}};
  return check->revision;
}

Status VerifyFullSnapshot(const std::string& path, int64_t revision, std::chrono::milliseconds timeout) {
  auto held = SnapshotFileRevision(path, timeout);
  if (!held.ok()) return held.error();
  if (*held > revision) {
    return Error{ErrorCode::kIo,
                 "the snapshot " + path + " holds revision " + std::to_string(*held) + ", past " +
                     std::to_string(revision),
                 {}};
  }
  return {};
}

Status WriteSnapshotStream(const std::string& database, const std::string& destination) {
  // A regular file only: a device or a FIFO in the data directory would copy
  // without end or block.
  auto fd = OpenRegularFile(database);
  if (!fd.ok()) return fd.error();
  std::ofstream out(destination, std::ios::binary | std::ios::trunc);
  Sha256Stream hash;
  std::string chunk(1 << 20, '\0');
  ssize_t got = 0;
  while (out && (got = read(*fd, chunk.data(), chunk.size())) != 0) {
    if (got < 0) {
      if (errno == EINTR) continue;
      break;
    }
    const std::string_view piece(chunk.data(), static_cast<size_t>(got));
    hash.Update(piece);
    out.write(piece.data(), static_cast<std::streamsize>(piece.size()));
  }
  const int read_error = got < 0 ? errno : 0;
  close(*fd);
  if (read_error != 0)
    return Error{ErrorCode::kIo, "cannot read " + database + ": " + std::strerror(read_error), {}};
  out << hash.Finish();
  if (!out.flush()) return Error{ErrorCode::kIo, "cannot write " + destination, {}};
  return {};
}

}  // namespace ruleplane
