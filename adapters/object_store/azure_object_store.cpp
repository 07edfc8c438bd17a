#include "adapters/object_store/azure_object_store.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "adapters/local/atomic_file.h"

namespace ruleplane {

AzureObjectStore::AzureObjectStore(std::unique_ptr<AzureBlobClient> client, std::string prefix,
                                   std::string scratch_directory)
    : client_(std::move(client)),
      prefix_(std::move(prefix)),
      scratch_directory_(std::move(scratch_directory)) {
  while (!prefix_.empty() && prefix_.back() == '/') prefix_.pop_back();
}

std::string AzureObjectStore::Location() const { return client_->ContainerUrl() + "/" + prefix_; }

std::string AzureObjectStore::PrefixName() const { return prefix_.substr(prefix_.rfind('/') + 1); }

Result<ObjectListing> AzureObjectStore::List() const {
  auto blobs = client_->ListBlobs(prefix_ + "/");
  if (!blobs.ok()) return blobs.error();
  ObjectListing listing;
  for (const AzureBlob& blob : *blobs) {
    std::string key = blob.name.substr(prefix_.size() + 1);
    // What the Local provider lists too: v2/<name> and v1/Backup-<unix>/<name>.
    if (key.starts_with("v2/") || key.starts_with("v1/"))
      listing.objects.push_back({std::move(key), blob.size});
  }
  return listing;
}

Status AzureObjectStore::Read(const std::string& key, const ChunkSink& sink) const {
  Status refused;
  auto read = client_->GetBlobToSink(BlobName(key), [&](std::string_view piece) {
    refused = sink(piece);
    return refused.ok();
  });
  if (!refused.ok()) return refused;  // the sink's own error, not "the sink refused"
  if (!read.ok()) return read.error();
  return {};
}

Status AzureObjectStore::Write(const std::string& key, const ObjectProducer& produce) {
  auto scratch = ScratchDirectory();
  if (!scratch.ok()) return scratch.error();
  // Produced into a local file first: the upload then knows its size and
  // checksums each block, and memory stays at one piece whatever the size.
  const std::string staged = *scratch + "/.upload." + std::to_string(getpid());
  RequestLog inner;
  if (Status written = WriteStreamAtomically(staged, produce, key, inner); !written.ok()) return written;
  const Status moved = MoveFileIn(staged, key);
  if (!moved.ok()) std::remove(staged.c_str());
  return moved;
}

Status AzureObjectStore::MoveFileIn(const std::string& path, const std::string& key) {
  const Status uploaded = client_->PutBlobFromFile(BlobName(key), path);
  if (uploaded.ok()) std::remove(path.c_str());
  return uploaded;
}

Status AzureObjectStore::Delete(const std::string& key) { return client_->DeleteBlob(BlobName(key)); }

Result<std::string> AzureObjectStore::ScratchDirectory() const {
  std::error_code error;
  std::filesystem::create_directories(scratch_directory_, error);
  if (error) return Error{ErrorCode::kIo, "cannot create " + scratch_directory_ + ": " + error.message(), {}};
  return scratch_directory_;
}

}  // namespace ruleplane
