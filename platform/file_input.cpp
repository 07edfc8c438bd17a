#include "platform/file_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace ruleplane {
namespace {

const char* KindOf(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

Error TooLarge(const std::string& what, int64_t max_bytes) {
  return Error{ErrorCode::kIo, what + " is larger than the limit of " + FormatBytes(max_bytes), {}};
}

}  // namespace

std::string FormatBytes(int64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  if (value == static_cast<double>(static_cast<int64_t>(value))) {
    std::snprintf(text, sizeof text, "%lld %s", static_cast<long long>(value), kUnits[unit]);
  } else {
    std::snprintf(text, sizeof text, "%.1f %s", value, kUnits[unit]);
  }
  return text;
}

Result<int> OpenRegularFile(const std::string& path, Links links) {
  int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
  if (links == Links::kRefuse) flags |= O_NOFOLLOW;
  const int fd = open(path.c_str(), flags);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) return Error{ErrorCode::kNotFound, "cannot read " + path + ": no such file", {}};
    if (error == ELOOP && links == Links::kRefuse) {
      return Error{ErrorCode::kIo, "cannot read " + path + ": a symbolic link, not followed", {}};
    }
    return Error{ErrorCode::kIo, "cannot read " + path + ": " + std::strerror(error), {}};
  }
  struct stat status {};
  if (fstat(fd, &status) != 0) {
    const int error = errno;
    close(fd);
    return Error{ErrorCode::kIo, "cannot read " + path + ": " + std::strerror(error), {}};
  }
  if (!S_ISREG(status.st_mode)) {
    close(fd);
    return Error{
        ErrorCode::kIo, "cannot read " + path + ": " + KindOf(status.st_mode) + ", not a regular file", {}};
  }
  // Regular files never block; cleared so that reads behave as usual.
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

Status ReadFileInPieces(const std::string& path, Links links, const ChunkSink& sink) {
  auto fd = OpenRegularFile(path, links);
  if (!fd.ok()) return fd.error();
  std::vector<char> buffer(size_t{1} << 16);
  Status status;
  while (status.ok()) {
    const ssize_t got = read(*fd, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      status = Error{ErrorCode::kIo, "cannot read " + path + ": " + std::strerror(errno), {}};
      break;
    }
    if (got == 0) break;
    status = sink(std::string_view(buffer.data(), static_cast<size_t>(got)));
  }
  close(*fd);
  return status;
}

Result<std::string> ReadRegularFile(const std::string& path, int64_t max_bytes, Links links) {
  auto fd = OpenRegularFile(path, links);
  if (!fd.ok()) return fd.error();
  struct stat status {};
  fstat(*fd, &status);
  if (status.st_size > max_bytes) {
    close(*fd);
    return TooLarge(path, max_bytes);
  }
  std::string content;
  content.reserve(static_cast<size_t>(status.st_size));
  char buffer[1 << 16];
  while (true) {
    const ssize_t got = read(*fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int error = errno;
      close(*fd);
      return Error{ErrorCode::kIo, "cannot read " + path + ": " + std::strerror(error), {}};
    }
    if (got == 0) break;
    if (static_cast<int64_t>(content.size()) + got > max_bytes) {
      close(*fd);
      return TooLarge(path, max_bytes);  // it grew while read
    }
    content.append(buffer, static_cast<size_t>(got));
  }
  close(*fd);
  return content;
}

Result<std::string> ReadBoundedStream(std::istream& in, int64_t max_bytes, std::string_view what) {
  std::string content;
  char buffer[1 << 16];
  while (in) {
    in.read(buffer, sizeof buffer);
    const std::streamsize got = in.gcount();
    if (static_cast<int64_t>(content.size()) + got > max_bytes) return TooLarge(std::string(what), max_bytes);
    content.append(buffer, static_cast<size_t>(got));
  }
  if (in.bad()) return Error{ErrorCode::kIo, "cannot read " + std::string(what), {}};
  return content;
}

}  // namespace ruleplane
