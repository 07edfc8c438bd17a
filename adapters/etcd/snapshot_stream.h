// SnapshotStreamParser: the body of etcd's /v3/maintenance/snapshot answer
// as its JSON gateway sends it, parsed as it arrives. The gateway writes one
// JSON message a line:
//
//   {"result":{"header":{...},"remaining_bytes":"1234","blob":"<base64>"}}
//   {"error":{"grpc_code":14,"http_code":503,"message":"...","http_status":"..."}}
//
// Each line is taken as JSON takes it (any whitespace and key order JSON
// allows; a line in the gateway's own shape has its blob cut out, and only
// the few bytes before it parsed), and each result's blob, decoded, goes to
// the sink in order. Bounds: one
// line at most `max_line_bytes` (kMaxSnapshotLineBytes, 4 MiB: etcd sends a
// message per 32 KiB of database, 44 KiB in base64), time linear in the
// stream's length however it is sliced. Anything else (an error message, a
// line that is not JSON or has no result, a blob that is not base64, a line
// over the bound) is kUnavailable naming what it was; the sink's own error
// is returned as it is. After an error every Feed fails.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "engine/common/error.h"
#include "platform/line_splitter.h"

namespace ruleplane {

inline constexpr size_t kMaxSnapshotLineBytes = 4 * 1024 * 1024;

class SnapshotStreamParser {
 public:
  using BlobSink = std::function<Status(std::string_view bytes)>;
  explicit SnapshotStreamParser(size_t max_line_bytes = kMaxSnapshotLineBytes)
      : lines_(max_line_bytes, "the snapshot stream") {}

  Status Feed(std::string_view data, const BlobSink& sink);
  // The stream ended: a last line without its newline is taken as a message.
  Status Finish(const BlobSink& sink);

  uint64_t messages() const { return messages_; }
  uint64_t blob_bytes() const { return blob_bytes_; }

 private:
  Status Line(std::string_view line, const BlobSink& sink);

  LineSplitter lines_;
  std::string blob_;
  uint64_t messages_ = 0;
  uint64_t blob_bytes_ = 0;
  std::optional<Error> failed_;
};

}  // namespace ruleplane
