#include "engine/extensions/backup_listing.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <string>
#include <vector>

#include "engine/common/time_util.h"

namespace ruleplane::expr {
namespace {

std::optional<int64_t> ParseDigits(std::string_view text) {
  if (text.empty()) return std::nullopt;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// Splits `text` at the first `separator`: the part before it, and `text`
// becomes the part after it (or empty when there is none).
std::string_view TakeUntil(std::string_view& text, char separator) {
  const size_t at = text.find(separator);
  const std::string_view head = text.substr(0, at);
  text = at == std::string_view::npos ? std::string_view() : text.substr(at + 1);
  return head;
}

std::optional<std::string_view> CompressionName(std::string_view suffix) {
  if (suffix.empty()) return "";
  if (suffix == ".gz") return "gzip";
  if (suffix == ".Z") return "lzw";
  if (suffix == ".zlib") return "zlib";
  return std::nullopt;
}

// The last '/'-separated segment of `path`; `path` becomes what precedes it.
std::string_view TakeLastSegment(std::string_view& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) {
    const std::string_view segment = path;
    path = {};
    return segment;
  }
  const std::string_view segment = path.substr(slash + 1);
  path = path.substr(0, slash);
  return segment;
}

// The map keys and the constant strings of a result, made once.
struct Strings {
  std::array<Value, 10> keys;
  Value full = Value::String("Full");
  Value incr = Value::String("Incr");

  Strings() {
    const char* names[] = {"path",      "name",        "kind",  "startRevision", "lastRevision",
                           "createdAt", "compression", "final", "chunk",         "layout"};
    for (size_t i = 0; i < keys.size(); ++i) keys[i] = Value::String(names[i]);
  }
};

Value ToValue(const BackupSnapshot& snapshot, const Value& path) {
  static const Strings strings;
  const auto& keys = strings.keys;
  return Value::MakeMap({
      {keys[0], path},
      {keys[1], Value::String(std::string(snapshot.name))},
      {keys[2], snapshot.full ? strings.full : strings.incr},
      {keys[3], Value::Int(snapshot.start_revision)},
      {keys[4], Value::Int(snapshot.last_revision)},
      {keys[5], Value::MakeTimestamp(snapshot.created_at)},
      {keys[6], Value::String(std::string(snapshot.compression))},
      {keys[7], Value::Bool(snapshot.final)},
      {keys[8], Value::Bool(snapshot.chunk)},
      {keys[9], Value::String(std::string(snapshot.layout))},
  });
}

}  // namespace

std::optional<BackupSnapshot> ParseBackupName(std::string_view name) {
  if (name.find('/') != std::string_view::npos) return std::nullopt;
  BackupSnapshot snapshot;
  snapshot.name = name;
  std::string_view rest = name;
  const std::string_view kind = TakeUntil(rest, '-');
  if (kind != "Full" && kind != "Incr") return std::nullopt;
  snapshot.full = kind == "Full";
  const std::optional<int64_t> start = ParseDigits(TakeUntil(rest, '-'));
  const std::optional<int64_t> last = ParseDigits(TakeUntil(rest, '-'));
  const size_t dot = rest.find('.');
  const std::optional<int64_t> seconds = ParseDigits(rest.substr(0, dot));
  if (!start || !last || !seconds || *start > *last) return std::nullopt;
  snapshot.start_revision = *start;
  snapshot.last_revision = *last;
  auto created_at = TimestampFromUnixSeconds(*seconds);
  if (!created_at.ok()) return std::nullopt;
  snapshot.created_at = *created_at;
  std::string_view suffix = dot == std::string_view::npos ? std::string_view() : rest.substr(dot);
  snapshot.final = suffix.ends_with(".final");
  if (snapshot.final) suffix.remove_suffix(std::string_view(".final").size());
  const std::optional<std::string_view> compression = CompressionName(suffix);
  if (!compression) return std::nullopt;
  snapshot.compression = *compression;
  return snapshot;
}

std::optional<BackupSnapshot> ParseBackupPath(std::string_view path) {
  std::string_view folders = path;
  std::string_view name = TakeLastSegment(folders);
  const bool chunk = ParseDigits(name).has_value();
  if (chunk) name = TakeLastSegment(folders);
  std::optional<BackupSnapshot> snapshot = ParseBackupName(name);
  if (!snapshot) return std::nullopt;
  snapshot->chunk = chunk;
  const std::string_view folder = TakeLastSegment(folders);
  if (folder == "v2") {
    snapshot->layout = "v2";
  } else if (folder.starts_with("Backup-") && ParseDigits(folder.substr(7)) &&
             TakeLastSegment(folders) == "v1") {
    snapshot->layout = "v1";
  } else {
    return std::nullopt;
  }
  return snapshot;
}

Value ListBackups(const Value& paths) {
  struct Entry {
    BackupSnapshot snapshot;
    const Value* path;
  };
  const Value::List& items = paths.list_value();
  std::vector<Entry> entries;
  entries.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].is_string()) {
      return Value::Error("backups: expected a list of strings, element " + std::to_string(i) + " is " +
                          items[i].TypeName());
    }
    if (auto snapshot = ParseBackupPath(items[i].string_value())) entries.push_back({*snapshot, &items[i]});
  }
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.snapshot.last_revision != b.snapshot.last_revision) {
      return a.snapshot.last_revision < b.snapshot.last_revision;
    }
    if (a.snapshot.chunk != b.snapshot.chunk) return b.snapshot.chunk;
    return a.snapshot.created_at < b.snapshot.created_at;
  });
  Value::List result;
  result.reserve(entries.size());
  for (const Entry& entry : entries) result.push_back(ToValue(entry.snapshot, *entry.path));
  return Value::MakeList(std::move(result));
}

Value BackupNameValue(const Value& name) {
  const std::optional<BackupSnapshot> snapshot = ParseBackupName(name.string_value());
  if (!snapshot) return Value::Null();
  return ToValue(*snapshot, name);
}

}  // namespace ruleplane::expr
