#include "platform/file_range.h"

#include <unistd.h>

#include <cerrno>

namespace ruleplane {

std::function<size_t(char* buffer, size_t size)> FileRangeReader(int fd, int64_t offset) {
  return [fd, offset, sent = int64_t{0}](char* buffer, size_t size) mutable -> size_t {
    for (;;) {
      const ssize_t got = pread(fd, buffer, size, offset + sent);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return 0;
      sent += got;
      return static_cast<size_t>(got);
    }
  };
}

}  // namespace ruleplane
