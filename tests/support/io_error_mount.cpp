#include "tests/support/io_error_mount.h"

#include <chrono>
#include <filesystem>
#include <thread>

#include "tests/support/source_paths.h"

namespace ruleplane::testing {

bool IoErrorMount::Available() { return std::filesystem::exists("/dev/fuse"); }

Result<std::unique_ptr<IoErrorMount>> IoErrorMount::Start(const std::string& source, const std::string& mount,
                                                          const std::string& name, uint64_t failing_from,
                                                          const std::string& log_path) {
  std::unique_ptr<IoErrorMount> served(new IoErrorMount());
  // Debian's interpreter: python3-llfuse is installed for it, not for another python3 on PATH.
  auto process =
      ChildProcess::Start({"/usr/bin/python3", std::string(SourceDir()) + "/tests/support/io_error_fs.py",
                           source, mount, name, std::to_string(failing_from)},
                          log_path);
  if (!process.ok()) return process.error();
  served->process_ = std::move(*process);
  served->mount_ = mount;  // unmounted on every way out from here
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!std::filesystem::exists(mount + "/" + name)) {
    if (!served->process_.running() || std::chrono::steady_clock::now() > deadline) {
      return Error{ErrorCode::kUnavailable,
                   "the FUSE file system did not mount " + mount + " (its log: " + log_path + ")",
                   {}};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return served;
}

IoErrorMount::~IoErrorMount() {
  if (!mount_.empty()) (void)RunCommand({"fusermount3", "-u", mount_}, std::chrono::seconds(10));
  process_.Stop();
}

}  // namespace ruleplane::testing
