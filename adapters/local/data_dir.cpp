#include "adapters/local/data_dir.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <vector>

#include "adapters/etcd/etcd_client.h"
#include "adapters/local/snapshot_file.h"
#include "platform/file_input.h"

namespace ruleplane {
namespace {

namespace fs = std::filesystem;

// etcd's wal.metadataType (metadataType = iota + 1: 1, before entryType 2).
constexpr int kWalMetadataRecord = 1;

// A minimal protobuf reader: varints and length-delimited fields.
class ProtoReader {
 public:
  explicit ProtoReader(std::string_view bytes) : bytes_(bytes) {}
  bool done() const { return at_ >= bytes_.size(); }
  std::optional<uint64_t> Varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64 && at_ < bytes_.size(); shift += 7) {
      const auto byte = static_cast<uint8_t>(bytes_[at_++]);
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return value;
    }
    return std::nullopt;
  }
  // The next field: its number, and its varint value or bytes.
  bool Next(int& field, uint64_t& number, std::string_view& bytes) {
    auto tag = Varint();
    if (!tag) return false;
    field = static_cast<int>(*tag >> 3);
    switch (*tag & 7) {
      case 0: {
        auto value = Varint();
        if (!value) return false;
        number = *value;
        return true;
      }
      case 2: {
        auto length = Varint();
        if (!length || *length > bytes_.size() - at_) return false;
        bytes = bytes_.substr(at_, *length);
        at_ += *length;
        return true;
      }
      default:
        return false;  // etcd's WAL records use no other wire types
    }
  }

 private:
  std::string_view bytes_;
  size_t at_ = 0;
};

struct WalMetadata {
  uint64_t member_id = 0;
  uint64_t cluster_id = 0;
};

// Not readable is not missing or corrupt: the caller must not act on the
// directory (an I/O error, a permission, a symbolic link loop).
Error CouldNotRead(const std::string& path, const std::string& why) {
  return Error{ErrorCode::kUnavailable,
               "could not read " + path + " (not known to be missing or corrupt): " + why,
               {}};
}

// The metadata record of the first WAL segment: each record is a
// little-endian 64-bit length word (low 56 bits the length; padding in the
// top byte) followed by a walpb.Record {type = 1, crc = 2, data = 3}; the
// metadata record's data is an etcdserverpb.Metadata {NodeID = 1, ClusterID = 2}.
// nullopt with `problem` only on evidence (no segment, a segment that ends
// short or does not parse); an error (kUnavailable) when the directory or the
// segment could not be read: an I/O error is not a missing or corrupt WAL.
Result<std::optional<WalMetadata>> ReadWalMetadata(const std::string& wal_dir, std::string& problem) {
  const std::optional<WalMetadata> kNoMetadata;
  std::vector<std::string> segments;
  std::error_code error;
  for (fs::directory_iterator entry(wal_dir, error), end; !error && entry != end; entry.increment(error)) {
    if (entry->path().extension() == ".wal") segments.push_back(entry->path().string());
  }
  if (error) return CouldNotRead(wal_dir, error.message());
  if (segments.empty()) {
    problem = "the WAL directory has no segment";
    return kNoMetadata;
  }
  std::sort(segments.begin(), segments.end());
  // Opened as a regular file only (a FIFO would block, a device never end);
  // at most 16 records of at most 1 MiB are read.
  auto opened = OpenRegularFile(segments.front());
  if (!opened.ok()) return CouldNotRead(segments.front(), opened.error().message);
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{*opened};
  int read_error = 0;
  // False at the end of the segment, or on a read error (read_error).
  auto read_exactly = [&](char* into, size_t size) {
    while (size > 0) {
      const ssize_t got = read(closer.fd, into, size);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) read_error = errno;
      if (got <= 0) return false;
      into += got;
      size -= static_cast<size_t>(got);
    }
    return true;
  };
  for (int record = 0; record < 16; ++record) {
    unsigned char word[8];
    if (!read_exactly(reinterpret_cast<char*>(word), 8)) break;
    uint64_t length_field = 0;
    for (int i = 7; i >= 0; --i) length_field = length_field << 8 | word[i];
    const uint64_t length = length_field & 0x00ffffffffffffffULL;
    const uint64_t padding = (length_field >> 63) != 0 ? (length_field >> 56) & 0x7 : 0;
    if (length == 0 || length > (1 << 20)) break;
    std::string bytes(length + padding, '\0');
    if (!read_exactly(bytes.data(), bytes.size())) break;
    ProtoReader reader(std::string_view(bytes).substr(0, length));
    int64_t type = 0;
    std::string_view data;
    int field = 0;
    uint64_t number = 0;
    std::string_view field_bytes;
    while (!reader.done() && reader.Next(field, number, field_bytes)) {
      if (field == 1) type = static_cast<int64_t>(number);
      if (field == 3) data = field_bytes;
    }
    if (type != kWalMetadataRecord) continue;
    WalMetadata metadata;
    ProtoReader inner(data);
    while (!inner.done() && inner.Next(field, number, field_bytes)) {
      if (field == 1) metadata.member_id = number;
      if (field == 2) metadata.cluster_id = number;
    }
    if (metadata.member_id == 0 || metadata.cluster_id == 0) {
      problem = "the WAL's metadata record has no member or cluster ID";
      return kNoMetadata;
    }
    return std::optional<WalMetadata>(metadata);
  }
  if (read_error != 0) return CouldNotRead(segments.front(), std::strerror(read_error));
  problem = "the first WAL segment " + segments.front() + " has no metadata record";
  return kNoMetadata;
}

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\r')) text.pop_back();
  return text;
}

// Not knowing is not "corrupt": the caller must not act on the directory.
Error CouldNotCheck(const std::string& db, const std::string& why) {
  return Error{ErrorCode::kUnavailable,
               "could not check the database " + db + " (not known to be corrupt): " + why,
               {}};
}

}  // namespace

Value DataDirFacts::ToValue() const {
  return Value::MakeMap(
      {{Value::String("exists"), Value::Bool(exists)},
       {Value::String("empty"), Value::Bool(empty)},
       {Value::String("walHasMetadata"), Value::Bool(wal_has_metadata)},
       {Value::String("memberID"), Value::String(member_id)},
       {Value::String("clusterID"), Value::String(cluster_id)},
       {Value::String("dbExists"), Value::Bool(db_exists)},
       {Value::String("dbOpens"), Value::Bool(db_opens)},
       {Value::String("dbRevision"), Value::Int(db_revision)},
       {Value::String("corrupt"), Value::Bool(corrupt)},
       {Value::String("safeGuard"), safe_guard.empty() ? Value::Null() : Value::String(safe_guard)},
       {Value::String("valid"), Value::Bool(valid)},
       {Value::String("verificationError"), Value::String(verification_error)}});
}

Result<uint64_t> WalClusterId(const std::string& path) {
  const std::string wal_dir = path + "/member/wal";
  std::error_code error;
  if (!fs::is_directory(wal_dir, error)) {
    if (error && error != std::errc::no_such_file_or_directory) return CouldNotRead(wal_dir, error.message());
    return uint64_t{0};
  }
  std::string problem;
  auto metadata = ReadWalMetadata(wal_dir, problem);
  if (!metadata.ok()) return metadata.error();
  return *metadata ? (*metadata)->cluster_id : 0;
}

std::string SafeGuardPath(const std::string& data_dir) {
  fs::path directory(data_dir);
  if (!directory.has_filename()) directory = directory.parent_path();  // "/var/etcd/data/new.etcd/"
  return (directory.parent_path() / "safe_guard").string();
}

Result<DataDirFacts> InspectDataDir(const std::string& path, int64_t latest_backup_revision,
                                    const std::string& namespace_name) {
  DataDirFacts facts;
  std::error_code error;
  // On the volume, so also when the data directory itself is gone.
  if (fs::is_regular_file(SafeGuardPath(path), error)) {
    auto content = ReadRegularFile(SafeGuardPath(path), kMaxConfigFileBytes);
    facts.safe_guard = content.ok() ? Trimmed(*content) : "";
  }
  facts.exists = fs::is_directory(path, error);
  if (error && error != std::errc::no_such_file_or_directory) return CouldNotRead(path, error.message());
  if (!facts.exists) {
    facts.verification_error = "the data directory does not exist";
    return facts;
  }
  facts.empty = fs::is_empty(path, error);
  if (error)
    return Error{ErrorCode::kIo, "cannot read the data directory " + path + ": " + error.message(), {}};

  std::string wal_problem = "the data directory has no member/wal directory";
  const std::string wal_dir = path + "/member/wal";
  const bool has_wal_dir = fs::is_directory(wal_dir, error);
  if (error && error != std::errc::no_such_file_or_directory) return CouldNotRead(wal_dir, error.message());
  if (has_wal_dir) {
    auto metadata = ReadWalMetadata(wal_dir, wal_problem);
    if (!metadata.ok()) return metadata.error();
    if (*metadata) {
      facts.wal_has_metadata = true;
      facts.member_id = MemberIdHex((*metadata)->member_id);
      facts.cluster_id = MemberIdHex((*metadata)->cluster_id);
    } else if (wal_problem.find("no segment") == std::string::npos) {
      facts.corrupt = true;  // a segment that ends short or does not parse
    }
  }

  const std::string db = path + "/member/snap/db";
  facts.db_exists = fs::is_regular_file(db, error);
  if (error && error != std::errc::no_such_file_or_directory) return CouldNotCheck(db, error.message());
  std::string db_problem = "the data directory has no database (member/snap/db)";
  if (facts.db_exists) {
    const uintmax_t size = fs::file_size(db, error);
    if (error) return CouldNotCheck(db, error.message());
    auto check = CheckDatabaseFile(db, DatabaseCheckTimeout(size));
    if (!check.ok()) return CouldNotCheck(db, check.error().message);
    if (check->opens) {
      facts.db_opens = true;
      facts.db_revision = check->revision;
    } else {
      facts.corrupt = true;
      db_problem = "the database does not open: " + Trimmed(check->problem);
    }
  }

  if (!facts.wal_has_metadata) {
    facts.verification_error = wal_problem;
  } else if (!facts.db_opens) {
    facts.verification_error = db_problem;
  } else if (latest_backup_revision > 0 && facts.db_revision < latest_backup_revision) {
    facts.verification_error = "the database's revision " + std::to_string(facts.db_revision) +
                               " is behind the latest backup's " + std::to_string(latest_backup_revision);
  } else if (!namespace_name.empty() && !facts.safe_guard.empty() && facts.safe_guard != namespace_name) {
    facts.verification_error =
        "the data directory belongs to namespace " + facts.safe_guard + ", not " + namespace_name;
  } else {
    facts.valid = true;
  }
  return facts;
}

}  // namespace ruleplane
