#include "adapters/local/local_object_store.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "adapters/local/atomic_file.h"

namespace ruleplane {
namespace fs = std::filesystem;

LocalObjectStore::LocalObjectStore(std::string directory) : directory_(std::move(directory)) {
  while (directory_.size() > 1 && directory_.back() == '/') directory_.pop_back();
}

std::string LocalObjectStore::PrefixName() const { return fs::path(directory_).filename().string(); }

Result<ObjectListing> LocalObjectStore::List() const {
  ObjectListing listing;
  std::error_code error;
  if (!fs::exists(directory_, error)) return listing;
  // A missing v1/ or v2/ is no error (a store mounted empty has neither);
  // neither is followed when it is a symbolic link.
  auto is_directory = [&](const std::string& relative) {
    std::error_code ignored;
    const fs::file_status status = fs::symlink_status(directory_ + "/" + relative, ignored);
    if (fs::is_symlink(status)) {
      listing.warnings.push_back(relative +
                                 " is a symbolic link: not followed out of the store (left alone)");
    }
    return fs::is_directory(status);
  };
  // Every entry of `folder`, without following links; an entry that cannot
  // be read is reported and skipped, and so is a folder of cluster markers
  // (its snapshots are listed as without one; backups go on).
  auto each_entry = [&](const std::string& folder, auto visit) {
    std::error_code listed;
    for (auto it = fs::directory_iterator(directory_ + "/" + folder, listed);
         !listed && it != fs::directory_iterator(); it.increment(listed)) {
      std::error_code read;
      const fs::file_status status = it->symlink_status(read);
      const std::string path = folder + "/" + it->path().filename().string();
      if (read) {
        listing.warnings.push_back(path + " cannot be read (" + read.message() + "): skipped");
        continue;
      }
      visit(*it, path, status);
    }
    if (listed && folder.starts_with("clusters")) {
      listing.warnings.push_back(folder + " cannot be read (" + listed.message() + "): its markers skipped");
    } else if (listed) {
      error = listed;
    }
  };
  std::vector<std::string> folders;
  if (is_directory("v2")) folders.push_back("v2");
  for (const char* parent : {"v1", "clusters"}) {
    if (!is_directory(parent)) continue;
    each_entry(parent,
               [&](const fs::directory_entry&, const std::string& path, const fs::file_status& status) {
                 if (fs::is_directory(status)) folders.push_back(path);
               });
  }
  for (const std::string& folder : folders) {
    each_entry(folder, [&](const fs::directory_entry& entry, const std::string& path,
                           const fs::file_status& status) {
      if (fs::is_symlink(status)) {
        listing.warnings.push_back(path + " is a symbolic link: not followed out of the store, skipped");
        return;
      }
      if (!fs::is_regular_file(status)) {
        listing.warnings.push_back(path + " is not a snapshot (left alone)");
        return;
      }
      std::error_code sized;
      const auto size = static_cast<int64_t>(entry.file_size(sized));
      if (sized) {
        listing.warnings.push_back(path + " cannot be read (" + sized.message() + "): skipped");
        return;
      }
      listing.objects.push_back({path, size});
    });
  }
  if (error) return Error{ErrorCode::kIo, "cannot list " + directory_ + ": " + error.message(), {}};
  return listing;
}

Status LocalObjectStore::Read(const std::string& key, const ChunkSink& sink) const {
  return ReadFileInPieces(LocalPath(key), Links::kRefuse, sink);
}

Status LocalObjectStore::MakeParent(const std::string& key) const {
  const std::string parent = fs::path(LocalPath(key)).parent_path().string();
  std::error_code error;
  fs::create_directories(parent, error);
  if (error) return Error{ErrorCode::kIo, "cannot create " + parent + ": " + error.message(), {}};
  return {};
}

Status LocalObjectStore::Write(const std::string& key, const ObjectProducer& produce) {
  if (Status made = MakeParent(key); !made.ok()) return made;
  RequestLog inner;  // the caller records the write
  return WriteStreamAtomically(LocalPath(key), produce, key, inner);
}

Status LocalObjectStore::MoveFileIn(const std::string& path, const std::string& key) {
  if (Status made = MakeParent(key); !made.ok()) return made;
  RequestLog inner;
  return MoveFileDurably(path, LocalPath(key), inner);
}

Status LocalObjectStore::Delete(const std::string& key) {
  const std::string path = LocalPath(key);
  if (std::remove(path.c_str()) != 0 && errno != ENOENT)
    return Error{ErrorCode::kIo, "cannot delete " + path + ": " + std::strerror(errno), {}};
  return SyncDirectory(fs::path(path).parent_path().string());
}

Result<std::string> LocalObjectStore::ScratchDirectory() const {
  std::error_code error;
  fs::create_directories(directory_, error);
  if (error) return Error{ErrorCode::kIo, "cannot create " + directory_ + ": " + error.message(), {}};
  return directory_;
}

}  // namespace ruleplane
