#include "adapters/object_store/s3_object_store.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "adapters/local/atomic_file.h"

namespace ruleplane {

S3ObjectStore::S3ObjectStore(std::unique_ptr<S3Client> client, std::string prefix,
                             std::string scratch_directory)
    : client_(std::move(client)),
      prefix_(std::move(prefix)),
      scratch_directory_(std::move(scratch_directory)) {
  while (!prefix_.empty() && prefix_.back() == '/') prefix_.pop_back();
}

std::string S3ObjectStore::Location() const { return "s3://" + client_->config().bucket + "/" + prefix_; }

std::string S3ObjectStore::PrefixName() const { return prefix_.substr(prefix_.rfind('/') + 1); }

Result<ObjectListing> S3ObjectStore::List() const {
  auto objects = client_->ListObjects(prefix_ + "/");
  if (!objects.ok()) return objects.error();
  ObjectListing listing;
  for (const S3Object& object : *objects) {
    std::string key = object.key.substr(prefix_.size() + 1);
    // What the Local provider lists too: v2/<name> and v1/Backup-<unix>/<name>.
    if (key.starts_with("v2/") || key.starts_with("v1/"))
      listing.objects.push_back({std::move(key), object.size});
  }
  return listing;
}

Status S3ObjectStore::Read(const std::string& key, const ChunkSink& sink) const {
  Status refused;
  auto read = client_->GetObjectToSink(ObjectKey(key), [&](std::string_view piece) {
    refused = sink(piece);
    return refused.ok();
  });
  if (!refused.ok()) return refused;  // the sink's own error, not "the sink refused"
  if (!read.ok()) return read.error();
  return {};
}

Status S3ObjectStore::Write(const std::string& key, const ObjectProducer& produce) {
  auto scratch = ScratchDirectory();
  if (!scratch.ok()) return scratch.error();
  // Produced into a local file first: the upload then knows its size and
  // hashes each part, and memory stays at one piece whatever the size.
  const std::string staged = *scratch + "/.upload." + std::to_string(getpid());
  RequestLog inner;
  if (Status written = WriteStreamAtomically(staged, produce, key, inner); !written.ok()) return written;
  const Status moved = MoveFileIn(staged, key);
  if (!moved.ok()) std::remove(staged.c_str());
  return moved;
}

Status S3ObjectStore::MoveFileIn(const std::string& path, const std::string& key) {
  const Status uploaded = client_->PutObjectFromFile(ObjectKey(key), path);
  if (uploaded.ok()) std::remove(path.c_str());
  return uploaded;
}

Status S3ObjectStore::Delete(const std::string& key) { return client_->DeleteObject(ObjectKey(key)); }

Result<std::string> S3ObjectStore::ScratchDirectory() const {
  std::error_code error;
  std::filesystem::create_directories(scratch_directory_, error);
  if (error) return Error{ErrorCode::kIo, "cannot create " + scratch_directory_ + ": " + error.message(), {}};
  return scratch_directory_;
}

}  // namespace ruleplane
