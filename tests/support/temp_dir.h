// A fresh directory for one test under $TMPDIR (or /tmp), removed with the
// object; kept when the environment sets RULEPLANE_KEEP_TEST_DIRS=1 (for
// debugging) or after Keep() (a failed run's evidence).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include <stdlib.h>

namespace ruleplane::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& name) {
    const char* base = std::getenv("TMPDIR");
    std::string pattern =
        std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/ruleplane-" + name + "-XXXXXX";
    const char* made = mkdtemp(pattern.data());
    path_ = made != nullptr ? made : "";
  }
  ~TempDir() {
    const char* keep = std::getenv("RULEPLANE_KEEP_TEST_DIRS");
    if (path_.empty() || keep_ || (keep != nullptr && std::string(keep) == "1")) return;
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  void Keep() { keep_ = true; }

 private:
  std::string path_;
  bool keep_ = false;
};

}  // namespace ruleplane::testing
