// LocalObjectStore: etcd-backup-restore's "Local" provider, a directory
// (the store's prefix directory; etcd-druid mounts the host's
// /etc/gardener/local-backupbuckets/<container> and the prefix is a folder
// in it). Objects are files under v2/ and v1/Backup-*/; a write goes to a
// temporary file in the same folder, is fsynced and renamed into place, and
// the folder fsynced, so that a crash leaves the whole object or none.
// Symbolic links are never followed: a link in v2/ or v1/, or a v1/ or v2/
// that is a link, is skipped with a warning, as is an entry that cannot be
// read.
#pragma once

#include <string>

#include "adapters/object_store/object_store.h"

namespace ruleplane {

class LocalObjectStore final : public ObjectStore {
 public:
  explicit LocalObjectStore(std::string directory);

  const std::string& directory() const { return directory_; }

  std::string Location() const override { return directory_; }
  std::string PrefixName() const override;
  Result<ObjectListing> List() const override;
  Status Read(const std::string& key, const ChunkSink& sink) const override;
  Status Write(const std::string& key, const ObjectProducer& produce) override;
  Status MoveFileIn(const std::string& path, const std::string& key) override;
  Status Delete(const std::string& key) override;
  // The store directory itself: a download there is renamed into place.
  Result<std::string> ScratchDirectory() const override;
  std::string LocalPath(const std::string& key) const override { return directory_ + "/" + key; }

 private:
  Status MakeParent(const std::string& key) const;

  std::string directory_;
};

}  // namespace ruleplane
