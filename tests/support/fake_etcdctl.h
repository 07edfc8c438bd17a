// Tests that control which `etcdctl` the code under test runs: PATH is set to
// a directory of the test's own for as long as the object lives, holding
// either nothing (etcdctl is missing) or a shell script standing in for it.
#pragma once

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

namespace ruleplane::testing {

class ScopedPath {
 public:
  explicit ScopedPath(const std::string& directory) {
    if (const char* path = std::getenv("PATH")) saved_ = path;
    setenv("PATH", directory.c_str(), 1);
  }
  ~ScopedPath() {
    if (saved_) {
      setenv("PATH", saved_->c_str(), 1);
    } else {
      unsetenv("PATH");
    }
  }
  ScopedPath(const ScopedPath&) = delete;
  ScopedPath& operator=(const ScopedPath&) = delete;

 private:
  std::optional<std::string> saved_;
};

// Writes `directory`/etcdctl, a /bin/sh script with `body`.
inline bool WriteFakeEtcdctl(const std::string& directory, const std::string& body) {
  const std::string path = directory + "/etcdctl";
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  return chmod(path.c_str(), 0755) == 0;
}

}  // namespace ruleplane::testing
