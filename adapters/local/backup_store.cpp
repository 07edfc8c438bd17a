#include "adapters/local/backup_store.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <map>

#include "adapters/etcd/etcd_client.h"
#include "adapters/local/atomic_file.h"
#include "adapters/local/compression.h"
#include "adapters/local/delta_file.h"
#include "adapters/local/local_object_store.h"
#include "engine/common/sha256.h"
#include "engine/common/time_util.h"
#include "engine/extensions/backup_listing.h"
#include "platform/file_input.h"
#include "platform/sha256_stream.h"

namespace ruleplane {
namespace {

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

// What the replay (ParseDelta, then one transaction per revision from
// start_revision on) requires of a delta about to be stored.
Status CheckDelta(std::string_view bytes, int64_t start_revision, int64_t last_revision) {
  auto events = ParseDelta(bytes);
  if (!events.ok()) return events.error();
  if (events->empty()) return Error{ErrorCode::kParse, "delta snapshot: no event", {}};
  if (events->front().kv.mod_revision < start_revision) {
    return Error{ErrorCode::kParse,
                 "delta snapshot: its first event is at revision " +
                     std::to_string(events->front().kv.mod_revision) + ", before its start revision " +
                     std::to_string(start_revision),
                 {}};
  }
  if (events->back().kv.mod_revision != last_revision) {
    return Error{ErrorCode::kParse,
                 "delta snapshot: its last event is at revision " +
                     std::to_string(events->back().kv.mod_revision) + ", not at its last revision " +
                     std::to_string(last_revision),
                 {}};
  }
  return {};
}

// "clusters/<cluster ID>/snapshot-<snapshot name>": a name etcd-backup-restore
// never parses as a snapshot's (its kind would be "snapshot"), also where a
// prefix holding "v2" lets its listing see the marker.
constexpr std::string_view kMarkerFolder = "clusters/";
constexpr std::string_view kMarkerPrefix = "snapshot-";

std::string MarkerKey(uint64_t cluster_id, const std::string& name) {
  return std::string(kMarkerFolder) + MemberIdHex(cluster_id) + "/" + std::string(kMarkerPrefix) + name;
}

// An error reading a snapshot, naming it unless the message already does.
std::string Named(const StoredSnapshot& snapshot, const std::string& message) {
  return message.find(snapshot.name) != std::string::npos ? message : snapshot.path + ": " + message;
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
        {Value::String("cluster"),
         Value::String(snapshot.cluster_id == 0 ? "" : MemberIdHex(snapshot.cluster_id))},
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

BackupStore::BackupStore(std::string directory)
    : objects_(std::make_unique<LocalObjectStore>(std::move(directory))) {}

BackupStore::BackupStore(std::unique_ptr<ObjectStore> objects) : objects_(std::move(objects)) {}

void BackupStoreListing::SkipWhere(const std::function<std::string(const StoredSnapshot&)>& reason) {
  std::vector<StoredSnapshot> kept;
  for (StoredSnapshot& snapshot : snapshots) {
    const std::string why = reason(snapshot);
    if (why.empty()) {
      kept.push_back(std::move(snapshot));
    } else {
      warnings.push_back(snapshot.path + why + ", skipped (left alone)");
    }
  }
  snapshots = std::move(kept);
}

void BackupStoreListing::SkipBeyondRevision(int64_t cluster_revision) {
  SkipWhere([&](const StoredSnapshot& snapshot) {
    return snapshot.last_revision <= cluster_revision
               ? std::string()
               : " names revision " + std::to_string(snapshot.last_revision) +
                     ", beyond the cluster's current revision " + std::to_string(cluster_revision) +
                     ": suspect";
  });
}

void BackupStoreListing::KeepCluster(uint64_t cluster_id) {
  SkipWhere([&](const StoredSnapshot& snapshot) {
    return snapshot.MayBeOf(cluster_id) ? std::string()
                                        : " was taken from etcd cluster " + MemberIdHex(snapshot.cluster_id) +
                                              ", not " + MemberIdHex(cluster_id) + ": another cluster's";
  });
}

size_t BackupStoreListing::LatestFullIndex() const {
  for (size_t i = snapshots.size(); i > 0; --i) {
    if (snapshots[i - 1].kind == "Full") return i - 1;
  }
  return snapshots.size();
}

void BackupStoreListing::SkipImplausibleRevisions() {
  std::vector<StoredSnapshot> kept;
  for (StoredSnapshot& snapshot : snapshots) {
    if (!kept.empty()) {
      const StoredSnapshot& below = kept.back();
      const int64_t seconds =
          std::clamp<int64_t>(snapshot.created_on - below.created_on, 0, int64_t{1} << 40);
      const int64_t growth = (seconds + kRevisionClockSlackSeconds) * kMaxRevisionsPerSecond;
      if (snapshot.last_revision - below.last_revision > growth) {
        warnings.push_back(snapshot.path + " names revision " + std::to_string(snapshot.last_revision) +
                           ", " + std::to_string(snapshot.last_revision - below.last_revision) + " beyond " +
                           below.path + " (more than " + std::to_string(kMaxRevisionsPerSecond) +
                           " a second between their times): suspect, skipped (left alone)");
        continue;
      }
    }
    kept.push_back(std::move(snapshot));
  }
  snapshots = std::move(kept);
}

std::optional<StoredSnapshot> StoredSnapshotOf(const std::string& path) {
  auto parsed = expr::ParseBackupPath(path);
  if (!parsed) return std::nullopt;
  StoredSnapshot snapshot;
  snapshot.name = path.substr(path.rfind('/') + 1);
  snapshot.path = path;
  snapshot.kind = parsed->full ? "Full" : "Incr";
  snapshot.start_revision = parsed->start_revision;
  snapshot.last_revision = parsed->last_revision;
  snapshot.created_on = CreatedOn(snapshot.name);
  snapshot.compression_suffix = std::string(CompressionSuffix(snapshot.name));
  snapshot.is_final = parsed->final;
  return snapshot;
}

Result<BackupStoreListing> BackupStore::List(std::optional<int64_t> cluster_revision) const {
  auto objects = objects_->List();
  if (!objects.ok()) {
    return Error{objects.error().code,
                 "cannot list the backup store " + location() + ": " + objects.error().message,
                 {}};
  }
  BackupStoreListing listing;
  listing.prefix = objects_->PrefixName();
  listing.warnings = std::move(objects->warnings);
  // Snapshot name -> the clusters its markers name (a marker whose snapshot
  // is gone, left by an interrupted write or collection, names nothing).
  std::map<std::string, std::vector<uint64_t>> marked;
  for (const StoredObject& object : objects->objects) {
    if (!object.key.starts_with(kMarkerFolder)) continue;
    const std::string_view rest = std::string_view(object.key).substr(kMarkerFolder.size());
    const size_t slash = rest.find('/');
    const std::string_view hex = rest.substr(0, slash == std::string_view::npos ? 0 : slash);
    const std::string_view marker = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
    auto cluster = ParseMemberIdHex(hex);
    // Only the spelling MarkerKey writes, so that collection deletes what the listing counted.
    if (!cluster.ok() || *cluster == 0 || MemberIdHex(*cluster) != hex ||
        !marker.starts_with(kMarkerPrefix) || marker.find('/') != std::string_view::npos) {
      listing.warnings.push_back(object.key + " is not a snapshot's marker (left alone)");
      continue;
    }
    marked[std::string(marker.substr(kMarkerPrefix.size()))].push_back(*cluster);
  }
  for (const StoredObject& object : objects->objects) {
    if (object.key.starts_with(kMarkerFolder)) continue;
    std::optional<StoredSnapshot> snapshot = StoredSnapshotOf(object.key);
    if (!snapshot) {
      listing.warnings.push_back(object.key + " is not a snapshot (left alone)");
      continue;
    }
    snapshot->size_bytes = object.size_bytes;
    if (auto found = marked.find(snapshot->name);
        found != marked.end() && snapshot->path.starts_with("v2/")) {
      // Two clusters wrote one name (the same revision within one second):
      // whose bytes it holds cannot be told, so neither replay uses it.
      if (found->second.size() > 1) {
        listing.warnings.push_back(snapshot->path + " is marked as taken from " +
                                   std::to_string(found->second.size()) +
                                   " clusters: suspect, skipped (left alone)");
        continue;
      }
      snapshot->cluster_id = found->second.front();
    }
    listing.snapshots.push_back(std::move(*snapshot));
  }
  // As etcd-backup-restore sorts: by last revision, then creation time (and
  // by path, so that a provider's listing order does not matter).
  std::sort(listing.snapshots.begin(), listing.snapshots.end(),
            [](const StoredSnapshot& a, const StoredSnapshot& b) {
              if (a.last_revision != b.last_revision) return a.last_revision < b.last_revision;
              if (a.created_on != b.created_on) return a.created_on < b.created_on;
              return a.path < b.path;
            });
  listing.SkipImplausibleRevisions();
  if (cluster_revision) listing.SkipBeyondRevision(*cluster_revision);
  return listing;
}

Result<StoredSnapshot> BackupStore::Find(const std::string& name) const {
  auto listing = List();
  if (!listing.ok()) return listing.error();
  for (StoredSnapshot& snapshot : listing->snapshots) {
    if (snapshot.name == name) return std::move(snapshot);
  }
  return Error{ErrorCode::kNotFound, "the backup store " + location() + " has no snapshot " + name, {}};
}

std::string BackupStore::PathOf(const std::string& name) const {
  auto snapshot = Find(name);
  return snapshot.ok() ? objects_->LocalPath(snapshot->path) : "";
}

Result<std::string> BackupStore::ReadSnapshot(const std::string& name) const {
  auto snapshot = Find(name);
  if (!snapshot.ok()) return snapshot.error();
  std::string plain;
  const Status read = DecompressStream(
      snapshot->compression_suffix, DecompressionLimits{max_delta_bytes_},
      [&](const ChunkSink& feed) { return objects_->Read(snapshot->path, feed); },
      [&](std::string_view piece) -> Status {
        plain.append(piece);
        return {};
      });
  if (!read.ok()) return Error{read.error().code, Named(*snapshot, read.error().message), {}};
  return plain;
}

Status BackupStore::ReadSnapshotToFile(const std::string& name, const std::string& destination) const {
  auto snapshot = Find(name);
  if (!snapshot.ok()) return snapshot.error();
  RequestLog copy;  // recorded by the caller
  const Status read = WriteStreamAtomically(
      destination,
      [&](const ChunkSink& sink) {
        return DecompressStream(
            snapshot->compression_suffix, DecompressionLimits{kMaxFullSnapshotBytes},
            [&](const ChunkSink& feed) { return objects_->Read(snapshot->path, feed); }, sink);
      },
      "decompressed " + name, copy);
  if (!read.ok()) return Error{read.error().code, Named(*snapshot, read.error().message), {}};
  return read;
}

Status BackupStore::WriteMarker(const std::string& name, uint64_t cluster_id, RequestLog& log) {
  if (cluster_id == 0) return {};
  const std::string key = MarkerKey(cluster_id, name);
  if (!log.Record(
          Request{Request::Kind::kFile, "write", location() + "/" + key, {}, "the snapshot's cluster", true}))
    return {};
  return objects_->Write(key, [](const ChunkSink&) -> Status { return {}; });
}

Result<std::string> BackupStore::WriteFull(const std::string& source_file, int64_t revision,
                                           uint64_t cluster_id, std::chrono::system_clock::time_point now,
                                           const std::string& compression_suffix, RequestLog& log,
                                           bool final) {
  const std::string name =
      SnapshotName("Full", 0, revision, now) + compression_suffix + (final ? ".final" : "");
  const std::string key = "v2/" + name;
  if (!log.Record(Request{
          Request::Kind::kFile, "store", source_file, {location() + "/" + key}, "full snapshot", true}))
    return name;
  if (Status verified = VerifySnapshotTrailer(source_file, source_file); !verified.ok())
    return verified.error();
  if (Status marked = WriteMarker(name, cluster_id, log); !marked.ok()) return marked.error();
  if (compression_suffix.empty()) {
    if (Status moved = objects_->MoveFileIn(source_file, key); !moved.ok()) return moved.error();
    return name;
  }
  if (Status written = objects_->Write(
          key, [&](const ChunkSink& sink) { return CompressFile(source_file, compression_suffix, sink); });
      !written.ok())
    return written.error();
  std::remove(source_file.c_str());
  return name;
}

Result<std::string> BackupStore::WriteDelta(const std::string& delta_bytes, int64_t start_revision,
                                            int64_t last_revision, uint64_t cluster_id,
                                            std::chrono::system_clock::time_point now,
                                            const std::string& compression_suffix, RequestLog& log) {
  const std::string name = SnapshotName("Incr", start_revision, last_revision, now) + compression_suffix;
  const std::string key = "v2/" + name;
  if (Status valid = CheckDelta(delta_bytes, start_revision, last_revision); !valid.ok()) {
    return Error{ErrorCode::kFailedPrecondition,
                 "not stored: " + name + " would not replay: " + valid.error().message,
                 {}};
  }
  if (!log.Record(Request{Request::Kind::kFile,
                          "write",
                          location() + "/" + key,
                          {},
                          std::to_string(delta_bytes.size()) + " bytes of delta",
                          true})) {
    return name;
  }
  auto compressed = Compress(delta_bytes, compression_suffix);
  if (!compressed.ok()) return compressed.error();
  if (Status marked = WriteMarker(name, cluster_id, log); !marked.ok()) return marked.error();
  if (Status written = objects_->Write(key, [&](const ChunkSink& sink) { return sink(*compressed); });
      !written.ok())
    return written.error();
  return name;
}

Status BackupStore::Delete(const StoredSnapshot& snapshot, RequestLog& log) {
  if (!log.Record(Request{
          Request::Kind::kFile, "delete", location() + "/" + snapshot.path, {}, "garbage collection", true}))
    return {};
  if (Status deleted = objects_->Delete(snapshot.path); !deleted.ok()) return deleted;
  if (snapshot.cluster_id == 0) return {};
  const Status unmarked = objects_->Delete(MarkerKey(snapshot.cluster_id, snapshot.name));
  return unmarked.ok() || unmarked.error().code == ErrorCode::kNotFound ? Status{} : unmarked;
}

Result<uint64_t> ChainCluster(const std::vector<StoredSnapshot>& chain) {
  const StoredSnapshot* first = nullptr;
  for (const StoredSnapshot& snapshot : chain) {
    if (snapshot.cluster_id == 0) continue;
    if (first == nullptr) {
      first = &snapshot;
    } else if (snapshot.cluster_id != first->cluster_id) {
      return Error{ErrorCode::kFailedPrecondition,
                   snapshot.path + " was taken from etcd cluster " + MemberIdHex(snapshot.cluster_id) + ", " +
                       first->path + " from cluster " + MemberIdHex(first->cluster_id) +
                       ": one replay would mix two clusters' histories; nothing was applied",
                   {}};
    }
  }
  return first == nullptr ? 0 : first->cluster_id;
}

Status VerifySnapshotTrailer(const std::string& path, const std::string& what) {
  auto fd = OpenRegularFile(path);
  if (!fd.ok()) return fd.error();
  SnapshotTrailerCheck trailer;
  std::string chunk(1 << 20, '\0');
  while (true) {
    const ssize_t got = read(*fd, chunk.data(), chunk.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      close(*fd);
      return Error{ErrorCode::kIo, "cannot read " + path, {}};
    }
    if (got == 0) break;
    trailer.Update(std::string_view(chunk.data(), static_cast<size_t>(got)));
  }
  close(*fd);
  return trailer.Finish(what);
}

}  // namespace ruleplane
