#include "adapters/local/snapshot_file.h"

#include <fstream>
#include <sstream>

#include "adapters/process.h"
#include "adapters/sha256_stream.h"
#include "engine/common/json_value.h"

namespace ruleplane {

Result<int64_t> SnapshotFileRevision(const std::string& path, std::chrono::milliseconds timeout) {
  auto result = RunCommand({"etcdctl", "snapshot", "status", path, "-w", "json"}, timeout);
  if (!result.ok()) return result.error();
  if (result->exit_code != 0) {
    return Error{ErrorCode::kIo, "etcdctl snapshot status " + path + ": " + result->err, {}};
  }
  auto status = ParseJson(result->out);
  const Value* revision = status.ok() ? status->Find("revision") : nullptr;
  if (revision == nullptr || !revision->is_int()) {
    return Error{
        ErrorCode::kIo, "etcdctl snapshot status " + path + " printed no revision: " + result->out, {}};
  }
  return revision->int_value();
}

Status WriteSnapshotStream(const std::string& database, const std::string& destination) {
  std::ifstream in(database, std::ios::binary);
  if (!in) return Error{ErrorCode::kIo, "cannot read " + database, {}};
  std::ofstream out(destination, std::ios::binary | std::ios::trunc);
  Sha256Stream hash;
  std::string chunk(1 << 20, '\0');
  while (in && out) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const std::string_view piece(chunk.data(), static_cast<size_t>(in.gcount()));
    hash.Update(piece);
    out.write(piece.data(), static_cast<std::streamsize>(piece.size()));
  }
  if (in.bad()) return Error{ErrorCode::kIo, "cannot read " + database, {}};
  out << hash.Finish();
  if (!out.flush()) return Error{ErrorCode::kIo, "cannot write " + destination, {}};
  return {};
}

}  // namespace ruleplane
