#include "adapters/etcd/snapshot_stream.h"

#include <optional>

#include "engine/common/json_value.h"
#include "platform/base64.h"

namespace ruleplane {
namespace {

Error StreamError(const std::string& what) {
  return Error{ErrorCode::kUnavailable, what + " in the snapshot stream", {}};
}

bool Blank(std::string_view line) { return line.find_first_not_of(" \t\r") == std::string_view::npos; }

bool IsBase64Character(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/' ||
         c == '=';
}

// The blob of a line as the gateway writes it, `{"result":{...,"blob":"<base64>"}}`,
// found without parsing its 44 KiB as JSON (that parse was half of a full
// backup's time): the blob must be the last field, plain base64 up to the
// closing `"}}`, and what comes before it, closed with an empty blob, must
// parse as a message whose result's blob is that empty string; so a line is
// taken exactly as the JSON parse would take it. nullopt: parse it whole.
std::optional<std::string_view> GatewayBlob(std::string_view line) {
  constexpr std::string_view kKey = "\"blob\":\"", kEnd = "\"}}";
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  if (!line.starts_with("{\"result\":{") || !line.ends_with(kEnd)) return std::nullopt;
  const size_t key = line.rfind(kKey);
  if (key == std::string_view::npos) return std::nullopt;
  const size_t start = key + kKey.size();
  if (start > line.size() - kEnd.size()) return std::nullopt;
  const std::string_view blob = line.substr(start, line.size() - kEnd.size() - start);
  for (char c : blob)
    if (!IsBase64Character(c)) return std::nullopt;
  auto head = ParseJson(std::string(line.substr(0, start)) + std::string(kEnd));
  if (!head.ok() || !head->is_map() || head->map_value().size() != 1) return std::nullopt;
  const Value* result = head->Find("result");
  const Value* empty = result != nullptr && result->is_map() ? result->Find("blob") : nullptr;
  if (empty == nullptr || !empty->is_string() || !empty->string_value().empty()) return std::nullopt;
  return blob;
}

}  // namespace

Status SnapshotStreamParser::Line(std::string_view line, const BlobSink& sink) {
  if (Blank(line)) return {};
  if (const std::optional<std::string_view> blob = GatewayBlob(line); blob && !blob->empty()) {
    ++messages_;
    blob_.clear();
    if (!Base64DecodeAppend(*blob, blob_)) return StreamError("a blob that is not base64");
    blob_bytes_ += blob_.size();
    return sink(blob_);
  }
  auto message = ParseJson(line);
  if (!message.ok()) return StreamError("a message that is not JSON (" + message.error().message + ")");
  const Value* result = message->is_map() ? message->Find("result") : nullptr;
  if (result == nullptr) {
    const Value* error = message->is_map() ? message->Find("error") : nullptr;
    if (error != nullptr) return StreamError("etcd's error " + FormatJson(*error).substr(0, 500));
    return StreamError("a message without a result");
  }
  if (!result->is_map()) return StreamError("a result that is not an object");
  ++messages_;
  const Value* blob = result->Find("blob");
  if (blob == nullptr) return {};  // the gateway leaves out an empty blob
  blob_.clear();
  if (!blob->is_string() || !Base64DecodeAppend(blob->string_value(), blob_))
    return StreamError("a blob that is not base64");
  blob_bytes_ += blob_.size();
  return sink(blob_);
}

Status SnapshotStreamParser::Feed(std::string_view data, const BlobSink& sink) {
  if (failed_) return *failed_;
  Status status;
  auto fed = lines_.Feed(data, [&](std::string_view line) {
    status = Line(line, sink);
    return status.ok();
  });
  if (!fed.ok()) status = fed.error();
  if (!status.ok()) failed_ = status.error();
  return status;
}

Status SnapshotStreamParser::Finish(const BlobSink& sink) {
  if (failed_) return *failed_;
  Status status = Line(lines_.pending(), sink);
  if (!status.ok()) failed_ = status.error();
  return status;
}

}  // namespace ruleplane
