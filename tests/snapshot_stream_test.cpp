// SnapshotStreamParser takes every line as a JSON parse of the whole line
// would (adapters/etcd/snapshot_stream.h), also where it cuts the blob out of
// a line in the gateway's own shape without parsing it: each line here is
// checked against that reference.
#include "adapters/etcd/snapshot_stream.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "engine/common/json_value.h"
#include "platform/base64.h"

namespace ruleplane {
namespace {

// The line's blob as a whole-line JSON parse finds it; nullopt where the
// parser must fail (not JSON, no result, a blob that is not base64).
std::optional<std::string> Reference(const std::string& line) {
  auto message = ParseJson(line);
  if (!message.ok() || !message->is_map()) return std::nullopt;
  const Value* result = message->Find("result");
  if (result == nullptr || !result->is_map()) return std::nullopt;
  const Value* blob = result->Find("blob");
  if (blob == nullptr) return std::string();
  std::string decoded;
  if (!blob->is_string() || !Base64DecodeAppend(blob->string_value(), decoded)) return std::nullopt;
  return decoded;
}

std::optional<std::string> Parsed(const std::string& line) {
  SnapshotStreamParser parser;
  std::string blobs;
  auto sink = [&](std::string_view bytes) -> Status {
    blobs.append(bytes);
    return {};
  };
  if (!parser.Feed(line + "\n", sink).ok() || !parser.Finish(sink).ok()) return std::nullopt;
  return blobs;
}

TEST(SnapshotStream, EveryLineIsTakenAsAWholeLineJsonParseTakesIt) {
  const std::string data = Base64Encode(std::string("etcd's database \x01\x02\xff", 19));
  const std::vector<std::string> lines = {
      // The gateway's own shape, with and without a header.
      R"({"result":{"header":{"cluster_id":"14841639068965178418","member_id":"10276657743932975437","revision":"42","raft_term":"2"},"remaining_bytes":"1234","blob":")" +
          data + R"("}})",
      R"({"result":{"blob":")" + data + R"("}})",
      R"({"result":{"remaining_bytes":"0","blob":")" + data + "\"}}\r",
      // Shapes only a parse of the whole line reads right.
      R"({"result":{"header":{"note":"\"blob\":\""},"blob":")" + data + R"("}})",
      R"({"result":{"blob":"QUFB","blob":")" + data + R"("}})",
      R"({"result":{"blob":"QUF\/QUFB"}})",
      R"({"result":{"blob":")" + data + R"(" }})",
      R"({"error":{"message":"x"},"result":{"blob":")" + data + R"("}})",
      R"({"result":{"remaining_bytes":1,"blob":")" + data + R"("}})",
      // Lines that must fail.
      R"({"result":{"blob":"!!"}})",
      R"({"result":{garbage,"blob":")" + data + R"("}})",
      R"({"result":{"blob":")" + data + R"("}}"}})",
      R"({"result":[],"blob":")" + data + R"("}})",
      R"({"result":{"blob":"QUFB"})",
  };
  for (const std::string& line : lines) EXPECT_EQ(Parsed(line), Reference(line)) << line;
}

}  // namespace
}  // namespace ruleplane
