#include "adapters/local/backup_store.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "adapters/local/atomic_file.h"
#include "adapters/local/compression.h"
#include "adapters/sha256_stream.h"
#include "engine/common/sha256.h"
#include "engine/common/time_util.h"
#include "engine/extensions/backup_listing.h"

namespace ruleplane {
namespace {

namespace fs = std::filesystem;

Result<std::string> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  if (!in || !(bytes << in.rdbuf())) return Error{ErrorCode::kIo, "cannot read " + path, {}};
  return bytes.str();
}

// "Full-00000000-00001000-1700000000".
std::string SnapshotName(const char* kind, int64_t start, int64_t last,
                         std::chrono::system_clock::time_point now) {
  char name[96];
  std::snprintf(name, sizeof name, "%s-%08lld-%08lld-%lld", kind, static_cast<long long>(start),
                static_cast<long long>(last),
                static_cast<long long>(
                    std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count()));
  return name;
}

int64_t CreatedOn(std::string_view name) {
  // The digits after the third '-'.
  size_t at = 0;
  for (int dashes = 0; dashes < 3 && at != std::string_view::npos; ++dashes) {
    at = name.find('-', at);
    if (at != std::string_view::npos) ++at;
  }
  if (at == std::string_view::npos) return 0;
  int64_t seconds = 0;
  for (; at < name.size() && name[at] >= '0' && name[at] <= '9'; ++at)
    seconds = seconds * 10 + (name[at] - '0');
  return seconds;
}

}  // namespace

Value BackupStoreListing::ToValue() const {
  Value::List snapshots_value, paths;
  for (const StoredSnapshot& snapshot : snapshots) {
    auto created = TimestampFromUnixSeconds(snapshot.created_on);
    snapshots_value.push_back(Value::MakeMap({
        {Value::String("name"), Value::String(snapshot.name)},
        {Value::String("kind"), Value::String(snapshot.kind)},
        {Value::String("startRevision"), Value::Int(snapshot.start_revision)},
        {Value::String("lastRevision"), Value::Int(snapshot.last_revision)},
        {Value::String("createdOn"), Value::String(created.ok() ? FormatRfc3339(*created) : "")},
        {Value::String("compression"), Value::String(snapshot.compression_suffix)},
        {Value::String("final"), Value::Bool(snapshot.is_final)},
        {Value::String("path"), Value::String(snapshot.path)},
    }));
    paths.push_back(Value::String(prefix + "/" + snapshot.path));
  }
  Value::List warning_values;
  for (const std::string& warning : warnings) warning_values.push_back(Value::String(warning));
  return Value::MakeMap({{Value::String("reachable"), Value::Bool(true)},
                         {Value::String("snapshots"), Value::MakeList(std::move(snapshots_value))},
                         {Value::String("paths"), Value::MakeList(std::move(paths))},
                         {Value::String("warnings"), Value::MakeList(std::move(warning_values))}});
}

BackupStore::BackupStore(std::string directory) : directory_(std::move(directory)) {
  while (directory_.size() > 1 && directory_.back() == '/') directory_.pop_back();
}

Result<BackupStoreListing> BackupStore::List() const {
  BackupStoreListing listing;
  listing.prefix = fs::path(directory_).filename().string();
  std::error_code error;
  if (!fs::exists(directory_, error)) return listing;
  // A missing v1/ or v2/ is no error (a store mounted empty has neither).
  std::error_code absent;
  std::vector<std::string> folders;
  if (fs::is_directory(directory_ + "/v2", absent)) folders.push_back("v2");
  if (fs::is_directory(directory_ + "/v1", absent)) {
    for (const auto& entry : fs::directory_iterator(directory_ + "/v1", error)) {
      if (entry.is_directory()) folders.push_back("v1/" + entry.path().filename().string());
    }
  }
  for (const std::string& folder : folders) {
    for (const auto& entry : fs::directory_iterator(directory_ + "/" + folder, error)) {
      const std::string name = entry.path().filename().string();
      const std::string path = folder + "/" + name;
      auto parsed = expr::ParseBackupPath(path);
      if (!parsed || !entry.is_regular_file()) {
        listing.warnings.push_back(path + " is not a snapshot (left alone)");
        continue;
      }
      StoredSnapshot snapshot;
      snapshot.name = name;
      snapshot.path = path;
      snapshot.kind = parsed->full ? "Full" : "Incr";
      snapshot.start_revision = parsed->start_revision;
      snapshot.last_revision = parsed->last_revision;
      snapshot.created_on = CreatedOn(name);
      snapshot.compression_suffix = std::string(CompressionSuffix(name));
      snapshot.is_final = parsed->final;
      snapshot.size_bytes = static_cast<int64_t>(entry.file_size(error));
      listing.snapshots.push_back(std::move(snapshot));
    }
  }
  if (error)
    return Error{ErrorCode::kIo, "cannot list the backup store " + directory_ + ": " + error.message(), {}};
  // As etcd-backup-restore sorts: by last revision, then creation time.
  std::stable_sort(listing.snapshots.begin(), listing.snapshots.end(),
                   [](const StoredSnapshot& a, const StoredSnapshot& b) {
                     if (a.last_revision != b.last_revision) return a.last_revision < b.last_revision;
                     return a.created_on < b.created_on;
                   });
  return listing;
}

std::string BackupStore::PathOf(const std::string& name) const {
  auto listing = List();
  if (!listing.ok()) return "";
  for (const StoredSnapshot& snapshot : listing->snapshots) {
    if (snapshot.name == name) return directory_ + "/" + snapshot.path;
  }
  return "";
}

Result<std::string> BackupStore::ReadSnapshot(const std::string& name) const {
  const std::string path = PathOf(name);
  if (path.empty())
    return Error{ErrorCode::kNotFound, "the backup store " + directory_ + " has no snapshot " + name, {}};
  auto bytes = ReadBytes(path);
  if (!bytes.ok()) return bytes.error();
  auto plain = Decompress(*bytes, CompressionSuffix(name));
  if (!plain.ok()) return Error{plain.error().code, path + ": " + plain.error().message, {}};
  return plain;
}

Status BackupStore::ReadSnapshotToFile(const std::string& name, const std::string& destination) const {
  const std::string path = PathOf(name);
  if (path.empty())
    return Error{ErrorCode::kNotFound, "the backup store " + directory_ + " has no snapshot " + name, {}};
  RequestLog copy;  // recorded by the caller
  if (CompressionSuffix(name).empty()) return CopyFileAtomically(path, destination, copy);
  auto plain = ReadSnapshot(name);
  if (!plain.ok()) return plain.error();
  return WriteFileAtomically(destination, *plain, copy);
}

Result<std::string> BackupStore::WriteFull(const std::string& source_file, int64_t revision,
                                           std::chrono::system_clock::time_point now,
                                           const std::string& compression_suffix, RequestLog& log) {
  const std::string name = SnapshotName("Full", 0, revision, now) + compression_suffix;
  const std::string destination = directory_ + "/v2/" + name;
  if (!log.Record(Request{Request::Kind::kFile, "store", source_file, {destination}, "full snapshot", true}))
    return name;
  if (Status verified = VerifySnapshotTrailer(source_file, source_file); !verified.ok())
    return verified.error();
  std::error_code error;
  fs::create_directories(directory_ + "/v2", error);
  if (error) return Error{ErrorCode::kIo, "cannot create " + directory_ + "/v2: " + error.message(), {}};
  RequestLog inner;
  if (compression_suffix.empty()) {
    if (Status moved = MoveFileDurably(source_file, destination, inner); !moved.ok()) return moved.error();
    return name;
  }
  auto bytes = ReadBytes(source_file);
  if (!bytes.ok()) return bytes.error();
  auto compressed = Compress(*bytes, compression_suffix);
  if (!compressed.ok()) return compressed.error();
  if (Status written = WriteFileAtomically(destination, *compressed, inner); !written.ok())
    return written.error();
  return name;
}

Result<std::string> BackupStore::WriteDelta(const std::string& delta_bytes, int64_t start_revision,
                                            int64_t last_revision, std::chrono::system_clock::time_point now,
                                            const std::string& compression_suffix, RequestLog& log) {
  const std::string name = SnapshotName("Incr", start_revision, last_revision, now) + compression_suffix;
  const std::string destination = directory_ + "/v2/" + name;
  if (!log.Record(Request{Request::Kind::kFile,
                          "write",
                          destination,
                          {},
                          std::to_string(delta_bytes.size()) + " bytes of delta",
                          true})) {
    return name;
  }
  std::error_code error;
  fs::create_directories(directory_ + "/v2", error);
  if (error) return Error{ErrorCode::kIo, "cannot create " + directory_ + "/v2: " + error.message(), {}};
  auto compressed = Compress(delta_bytes, compression_suffix);
  if (!compressed.ok()) return compressed.error();
  RequestLog inner;
  if (Status written = WriteFileAtomically(destination, *compressed, inner); !written.ok())
    return written.error();
  return name;
}

Status VerifySnapshotTrailer(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{ErrorCode::kIo, "cannot read " + path, {}};
  SnapshotTrailerCheck trailer;
  std::string chunk(1 << 20, '\0');
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    trailer.Update(std::string_view(chunk.data(), static_cast<size_t>(in.gcount())));
  }
  if (in.bad()) return Error{ErrorCode::kIo, "cannot read " + path, {}};
  return trailer.Finish(what);
}

}  // namespace ruleplane
