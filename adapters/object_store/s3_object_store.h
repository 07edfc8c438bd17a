// S3ObjectStore: etcd-backup-restore's "S3" provider (and the
// S3-compatible stores it reaches with an endpoint override and
// path-style: MinIO, Dell ECS, OpenShift OCS). Objects are
// "<prefix>/v2/<name>" in one bucket, as etcd-backup-restore's
// S3SnapStore names them, so that either tool restores from the other's
// backups. A write goes through a file in the scratch directory and is
// uploaded whole (one PUT, or a multipart upload that is aborted when a
// part fails): no reader ever lists a partial object.
#pragma once

#include <memory>
#include <string>

#include "adapters/object_store/object_store.h"
#include "adapters/object_store/s3_client.h"

namespace ruleplane {

class S3ObjectStore final : public ObjectStore {
 public:
  // `prefix`: etcd-backup-restore's store prefix ("etcd-main"); the
  // scratch directory holds what is on its way in (created when needed).
  S3ObjectStore(std::unique_ptr<S3Client> client, std::string prefix, std::string scratch_directory);

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
  std::string ObjectKey(const std::string& key) const { return prefix_ + "/" + key; }

  // The client keeps one connection and serves one request at a time; the
  // interface's reads are const.
  std::unique_ptr<S3Client> client_;
  std::string prefix_;
  std::string scratch_directory_;
};

}  // namespace ruleplane
