// A file whose bytes past an offset cannot be read: a FUSE file system
// (tests/support/io_error_fs.py, with Debian's python3-llfuse and fuse3)
// mounted on a directory of the test's own, answering EIO as a failing disk
// does, to read(2) and to a memory map (SIGBUS) alike. Stopped by its PID
// after it is unmounted.
//
//   auto mount = IoErrorMount::Start(copy_of_db, dir + "/snap", "db", 8192, dir + "/fs.log");
//   // dir/snap/db: the first two pages read, every later one fails with EIO
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/common/error.h"
#include "platform/process.h"

namespace ruleplane::testing {

class IoErrorMount {
 public:
  // Mounts `mount` (an existing empty directory) showing one file, `name`,
  // with `source`'s size and bytes; a read at byte `failing_from` or past it
  // fails. Ready when this returns.
  static Result<std::unique_ptr<IoErrorMount>> Start(const std::string& source, const std::string& mount,
                                                     const std::string& name, uint64_t failing_from,
                                                     const std::string& log_path);
  // Whether the kernel offers FUSE here (/dev/fuse); a machine without it
  // cannot run the tests that need one.
  static bool Available();
  ~IoErrorMount();  // unmounts (fusermount3 -u), then stops the server
  IoErrorMount(const IoErrorMount&) = delete;
  IoErrorMount& operator=(const IoErrorMount&) = delete;

 private:
  IoErrorMount() = default;
  ChildProcess process_;
  std::string mount_;
};

}  // namespace ruleplane::testing
