#include "platform/directory_sync.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ruleplane {

Status SyncDirectory(const std::string& path) {
  const int fd = open(path.empty() ? "." : path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return Error{ErrorCode::kIo, "cannot open the directory " + path + ": " + std::strerror(errno), {}};
  const int synced = fsync(fd);
  const int error = errno;
  close(fd);
  if (synced != 0)
    return Error{ErrorCode::kIo, "cannot fsync the directory " + path + ": " + std::strerror(error), {}};
  return {};
}

}  // namespace ruleplane
