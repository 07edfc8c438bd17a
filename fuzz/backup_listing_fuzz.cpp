// Fuzzes the store listing and the backup-name parser. The input is lines:
// the first is the cluster's revision (digits; empty for none), each other a
// path in the store ("v2/Full-...", "v1/Backup-.../Full-...") to create as a
// file, or "PATH -> TARGET" as a symbolic link. Every line is also parsed as
// a name and as a path. BackupStore::List must not fail on what it finds (it
// skips and reports), must list only regular files inside the store, and,
// given the cluster's revision, none beyond it.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

#include "adapters/local/backup_store.h"
#include "engine/extensions/backup_listing.h"

namespace {

namespace fs = std::filesystem;

// A fresh store directory for each input, under $TMPDIR.
std::string StoreDirectory() {
  static const std::string base = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/backup-listing-fuzz-XXXXXX";
    return std::string(mkdtemp(pattern.data()) != nullptr ? pattern.c_str() : "/tmp");
  }();
  std::error_code ignored;
  fs::remove_all(base + "/store", ignored);
  fs::create_directories(base + "/store", ignored);
  return base + "/store";
}

// Only paths that stay inside the store: no "..", no absolute path, no NUL.
bool Inside(std::string_view path) {
  if (path.empty() || path.size() > 200 || path.front() == '/' || path.find('\0') != std::string_view::npos)
    return false;
  for (const auto& part : fs::path(std::string(path))) {
    if (part == ".." || part == ".") return false;
  }
  return true;
}

// Whether no component of `path` under `store` is a symbolic link already
// (the fuzzer must never write through one, out of the store).
bool NoLinkOnTheWay(const std::string& store, std::string_view path) {
  fs::path walked(store);
  for (const auto& part : fs::path(std::string(path))) {
    walked /= part;
    std::error_code absent;
    if (fs::is_symlink(fs::symlink_status(walked, absent))) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ruleplane;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string store = StoreDirectory();
  std::optional<int64_t> cluster_revision;
  size_t at = 0;
  int lines = 0;
  while (at <= text.size() && lines < 64) {
    const size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (lines++ == 0) {
      if (!line.empty() && line.size() < 19 && line.find_first_not_of("0123456789") == std::string_view::npos)
        cluster_revision = std::stoll(std::string(line));
      continue;
    }
    if (auto name = expr::ParseBackupName(line); name && name->start_revision > name->last_revision)
      std::abort();
    if (auto path = expr::ParseBackupPath(line); path && path->start_revision > path->last_revision)
      std::abort();
    const size_t arrow = line.find(" -> ");
    const std::string_view path = line.substr(0, arrow);
    if (!Inside(path) || !NoLinkOnTheWay(store, path)) continue;
    std::error_code ignored;
    fs::create_directories(fs::path(store + "/" + std::string(path)).parent_path(), ignored);
    if (arrow == std::string_view::npos) {
      std::ofstream(store + "/" + std::string(path)) << "x";
    } else {
      fs::create_symlink(std::string(line.substr(arrow + 4)), store + "/" + std::string(path), ignored);
    }
  }
  auto listing = BackupStore(store).List(cluster_revision);
  if (!listing.ok()) std::abort();
  for (const StoredSnapshot& snapshot : listing->snapshots) {
    struct stat status {};
    if (lstat((store + "/" + snapshot.path).c_str(), &status) != 0 || !S_ISREG(status.st_mode)) std::abort();
    if (snapshot.path.find("..") != std::string::npos) std::abort();
    if (cluster_revision && snapshot.last_revision > *cluster_revision) std::abort();
    if (snapshot.start_revision > snapshot.last_revision) std::abort();
  }
  return 0;
}
