#include "adapters/object_store/bucket_object_store.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "adapters/local/atomic_file.h"

namespace ruleplane {
namespace {

// Reads through a client whose sink says go on or stop: the sink's own
// error, when it stopped the read, is the one returned.
template <typename Get>
Status ReadWith(const Get& get, const ChunkSink& sink) {
  Status refused;
  auto read = get([&](std::string_view piece) {
    refused = sink(piece);
    return refused.ok();
  });
  if (!refused.ok()) return refused;
  if (!read.ok()) return read.error();
  return {};
}

class S3Bucket final : public BucketClient {
 public:
  explicit S3Bucket(std::unique_ptr<S3Client> client) : client_(std::move(client)) {}
  std::string Location() const override { return "s3://" + client_->config().bucket; }
  Result<std::vector<StoredObject>> List(const std::string& prefix) override {
    auto objects = client_->ListObjects(prefix);
    if (!objects.ok()) return objects.error();
    std::vector<StoredObject> listed;
    for (const S3Object& object : *objects) listed.push_back({object.key, object.size});
    return listed;
  }
  Status Read(const std::string& key, const ChunkSink& sink) override {
    return ReadWith([&](const auto& on_data) { return client_->GetObjectToSink(key, on_data); }, sink);
  }
  Status PutFile(const std::string& key, const std::string& path) override {
    return client_->PutObjectFromFile(key, path);
  }
  Status Delete(const std::string& key) override { return client_->DeleteObject(key); }

 private:
  std::unique_ptr<S3Client> client_;
};

class AzureContainer final : public BucketClient {
 public:
  explicit AzureContainer(std::unique_ptr<AzureBlobClient> client) : client_(std::move(client)) {}
  std::string Location() const override { return client_->ContainerUrl(); }
  Result<std::vector<StoredObject>> List(const std::string& prefix) override {
    auto blobs = client_->ListBlobs(prefix);
    if (!blobs.ok()) return blobs.error();
    std::vector<StoredObject> listed;
    for (const AzureBlob& blob : *blobs) listed.push_back({blob.name, blob.size});
    return listed;
  }
  Status Read(const std::string& key, const ChunkSink& sink) override {
    return ReadWith([&](const auto& on_data) { return client_->GetBlobToSink(key, on_data); }, sink);
  }
  Status PutFile(const std::string& key, const std::string& path) override {
    return client_->PutBlobFromFile(key, path);
  }
  Status Delete(const std::string& key) override { return client_->DeleteBlob(key); }

 private:
  std::unique_ptr<AzureBlobClient> client_;
};

}  // namespace

BucketObjectStore::BucketObjectStore(std::unique_ptr<BucketClient> client, std::string prefix,
                                     std::string scratch_directory)
    : client_(std::move(client)),
      prefix_(std::move(prefix)),
      scratch_directory_(std::move(scratch_directory)) {
  while (!prefix_.empty() && prefix_.back() == '/') prefix_.pop_back();
}

Result<ObjectListing> BucketObjectStore::List() const {
  auto objects = client_->List(prefix_ + "/");
  if (!objects.ok()) return objects.error();
  ObjectListing listing;
  for (StoredObject& object : *objects) {
    std::string key = object.key.substr(prefix_.size() + 1);
    // What the Local provider lists too: v2/<name>, v1/Backup-<unix>/<name>, clusters/<id>/<name>.
    if (key.starts_with("v2/") || key.starts_with("v1/") || key.starts_with("clusters/"))
      listing.objects.push_back({std::move(key), object.size_bytes});
  }
  return listing;
}

Status BucketObjectStore::Read(const std::string& key, const ChunkSink& sink) const {
  return client_->Read(ObjectKey(key), sink);
}

Status BucketObjectStore::Write(const std::string& key, const ObjectProducer& produce) {
  auto scratch = ScratchDirectory();
  if (!scratch.ok()) return scratch.error();
  // Produced into a local file first: the upload then knows its size and
  // hashes each part, and memory stays at one piece whatever the size.
  auto created = CreateScratchFile(*scratch, "upload");
  if (!created.ok()) return created.error();
  const std::string staged = *created;
  const RemovedAtExit removed(staged);
  RequestLog inner;
  if (Status written = WriteStreamAtomically(staged, produce, key, inner); !written.ok()) return written;
  return MoveFileIn(staged, key);
}

Status BucketObjectStore::MoveFileIn(const std::string& path, const std::string& key) {
  const Status uploaded = client_->PutFile(ObjectKey(key), path);
  if (uploaded.ok()) std::remove(path.c_str());
  return uploaded;
}

Status BucketObjectStore::Delete(const std::string& key) { return client_->Delete(ObjectKey(key)); }

Result<std::string> BucketObjectStore::ScratchDirectory() const {
  std::error_code error;
  std::filesystem::create_directories(scratch_directory_, error);
  if (error) return Error{ErrorCode::kIo, "cannot create " + scratch_directory_ + ": " + error.message(), {}};
  return scratch_directory_;
}

std::unique_ptr<ObjectStore> OpenS3Bucket(std::unique_ptr<S3Client> client, std::string prefix,
                                          std::string scratch_directory) {
  return std::make_unique<BucketObjectStore>(std::make_unique<S3Bucket>(std::move(client)), std::move(prefix),
                                             std::move(scratch_directory));
}

std::unique_ptr<ObjectStore> OpenAzureContainer(std::unique_ptr<AzureBlobClient> client, std::string prefix,
                                                std::string scratch_directory) {
  return std::make_unique<BucketObjectStore>(std::make_unique<AzureContainer>(std::move(client)),
                                             std::move(prefix), std::move(scratch_directory));
}

}  // namespace ruleplane
