// BucketObjectStore: the ObjectStore of the object-store providers (S3 and
// S3-compatible stores, Azure Blob Storage). Objects are "<prefix>/v2/<name>"
// in one bucket or container, as etcd-backup-restore's S3SnapStore and
// ABSSnapStore name them, so that either tool restores from the other's
// backups. A write goes through a file in the scratch directory and is
// uploaded whole (one request, or parts or blocks that become the object
// only when the last one is in: a multipart upload that is aborted when a
// part fails, blocks committed by one Put Block List): no reader ever lists
// a partial object.
//
//   auto s3 = S3Client::Create(config);
//   auto store = OpenS3Bucket(std::move(*s3), "etcd-main", "/var/etcd/data/temp");
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "adapters/object_store/azure_blob_client.h"
#include "adapters/object_store/object_store.h"
#include "adapters/object_store/s3_client.h"

namespace ruleplane {

// What a provider's client answers, keys whole ("<prefix>/v2/<name>").
class BucketClient {
 public:
  virtual ~BucketClient() = default;
  // "s3://bucket", "https://account.blob.core.windows.net/container".
  virtual std::string Location() const = 0;
  virtual Result<std::vector<StoredObject>> List(const std::string& prefix) = 0;
  // The object's bytes to `sink` as they arrive; `sink`'s own error is returned as it is.
  virtual Status Read(const std::string& key, const ChunkSink& sink) = 0;
  virtual Status PutFile(const std::string& key, const std::string& path) = 0;
  virtual Status Delete(const std::string& key) = 0;
};

class BucketObjectStore final : public ObjectStore {
 public:
  // `prefix`: etcd-backup-restore's store prefix ("etcd-main"); the
  // scratch directory holds what is on its way in (created when needed).
  BucketObjectStore(std::unique_ptr<BucketClient> client, std::string prefix, std::string scratch_directory);

  std::string Location() const override { return client_->Location() + "/" + prefix_; }
  std::string PrefixName() const override { return prefix_.substr(prefix_.rfind('/') + 1); }
  Result<ObjectListing> List() const override;
  Status Read(const std::string& key, const ChunkSink& sink) const override;
  Status Write(const std::string& key, const ObjectProducer& produce) override;
  Status MoveFileIn(const std::string& path, const std::string& key) override;
  Status Delete(const std::string& key) override;
  Result<std::string> ScratchDirectory() const override;
  std::string LocalPath(const std::string&) const override { return ""; }

 private:
  std::string ObjectKey(const std::string& key) const { return prefix_ + "/" + key; }

  // The clients keep one connection and serve one request at a time; the
  // interface's reads are const.
  std::unique_ptr<BucketClient> client_;
  std::string prefix_;
  std::string scratch_directory_;
};

// The providers' stores.
std::unique_ptr<ObjectStore> OpenS3Bucket(std::unique_ptr<S3Client> client, std::string prefix,
                                          std::string scratch_directory);
std::unique_ptr<ObjectStore> OpenAzureContainer(std::unique_ptr<AzureBlobClient> client, std::string prefix,
                                                std::string scratch_directory);

}  // namespace ruleplane
