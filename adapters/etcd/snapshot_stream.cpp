#include "adapters/etcd/snapshot_stream.h"

#include "engine/common/json_value.h"
#include "platform/base64.h"

namespace ruleplane {
namespace {

Error StreamError(const std::string& what) {
  return Error{ErrorCode::kUnavailable, what + " in the snapshot stream", {}};
}

bool Blank(std::string_view line) { return line.find_first_not_of(" \t\r") == std::string_view::npos; }

}  // namespace

Status SnapshotStreamParser::Line(std::string_view line, const BlobSink& sink) {
  if (Blank(line)) return {};
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
