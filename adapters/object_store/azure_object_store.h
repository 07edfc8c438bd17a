// AzureObjectStore: etcd-backup-restore's "ABS" provider (Azure Blob
// Storage, and Azurite through an endpoint override). Objects are block
// blobs "<prefix>/v2/<name>" in one container, as etcd-backup-restore's
// ABSSnapStore names them, so that either tool restores from the other's
// backups. A write goes through a file in the scratch directory and is
// uploaded whole (one Put Blob, or blocks committed by one Put Block List
// at the end): no reader ever lists a partial object.
#pragma once

#include <memory>
#include <string>

#include "adapters/object_store/azure_blob_client.h"
#include "adapters/object_store/object_store.h"

namespace ruleplane {

class AzureObjectStore final : public ObjectStore {
 public:
  // `prefix`: etcd-backup-restore's store prefix ("etcd-main"); the
  // scratch directory holds what is on its way in (created when needed).
  AzureObjectStore(std::unique_ptr<AzureBlobClient> client, std::string prefix,
                   std::string scratch_directory);

  std::string Location() const override;
  std::string PrefixName() const override;
  Result<ObjectListing> List() const override;
  Status Read(const std::string& key, const ChunkSink& sink) const override;
  Status Write(const std::string& key, const ObjectProducer& produce) override;
  Status MoveFileIn(const std::string& path, const std::string& key) override;
  Status Delete(const std::string& key) override;
  Result<std::string> ScratchDirectory() const override;
  std::string LocalPath(const std::string&) const override { return ""; }

 private:
  std::string BlobName(const std::string& key) const { return prefix_ + "/" + key; }

  // The client keeps one connection and serves one request at a time; the
  // interface's reads are const.
  std::unique_ptr<AzureBlobClient> client_;
  std::string prefix_;
  std::string scratch_directory_;
};

}  // namespace ruleplane
