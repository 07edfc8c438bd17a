// ObjectStore: where a backup store's objects live, as etcd-backup-restore's
// snapshot-store providers see it: keys under the store's prefix
// ("v2/Full-00000000-00001000-1700000000.gz", "v1/Backup-1700000000/..."),
// each read as a stream and written whole or not at all. BackupStore
// (adapters/local/backup_store.h) keeps etcd-backup-restore's layout, names,
// compression and checks on top of it; a provider does I/O and nothing else.
//
// Providers: a local directory (Local, adapters/local/local_object_store.h);
// S3 and S3-compatible stores, and Azure Blob Storage (ABS), as buckets
// (adapters/object_store/bucket_object_store.h).
// GCS, Swift and OSS have none yet: OpenObjectStore (store_config.h)
// refuses them by name.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/common/error.h"
#include "platform/file_input.h"

namespace ruleplane {

struct StoredObject {
  std::string key;  // relative to the store: "v2/<name>", "v1/Backup-<unix>/<name>"
  int64_t size_bytes = 0;
};

struct ObjectListing {
  // The objects under v2/, v1/Backup-*/ and clusters/*/ (BackupStore's
  // markers), in no particular order.
  std::vector<StoredObject> objects;
  // Entries the provider skipped, each with why (a symbolic link, an entry
  // that cannot be read); never deleted.
  std::vector<std::string> warnings;
};

// Hands an object's bytes, piece by piece, to the sink it is given.
using ObjectProducer = std::function<Status(const ChunkSink&)>;

class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  // Where the store is, for messages: "/var/etcd/backup/main", "s3://bucket/main".
  virtual std::string Location() const = 0;
  // The prefix's last segment: etcd-backup-restore's store prefix.
  virtual std::string PrefixName() const = 0;
  // A store that does not exist yet lists as empty.
  virtual Result<ObjectListing> List() const = 0;
  // kNotFound when absent; an object that ends early is an error, never a
  // shorter object.
  virtual Status Read(const std::string& key, const ChunkSink& sink) const = 0;
  // Whole or not at all: while it is written, and after it failed, a reader
  // sees no object under `key`.
  virtual Status Write(const std::string& key, const ObjectProducer& produce) = 0;
  // The local file `path` stored under `key`, and then removed (a local
  // store renames it into place when it can).
  virtual Status MoveFileIn(const std::string& path, const std::string& key) = 0;
  virtual Status Delete(const std::string& key) = 0;
  // A local directory for files on their way in or out (a snapshot is
  // downloaded and verified there before it is stored).
  virtual Result<std::string> ScratchDirectory() const = 0;
  // The local file that holds `key`; "" when the store is not a directory.
  virtual std::string LocalPath(const std::string& key) const = 0;
};

}  // namespace ruleplane
