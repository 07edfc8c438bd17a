#include "adapters/local/snapshot_file.h"

#include <fstream>
#include <sstream>

#include "adapters/process.h"
#include "engine/common/json_value.h"
#include "engine/common/sha256.h"

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
  std::ostringstream bytes;
  if (!(bytes << in.rdbuf())) return Error{ErrorCode::kIo, "cannot read " + database, {}};
  const std::string content = bytes.str();
  std::ofstream out(destination, std::ios::binary | std::ios::trunc);
  out << content << Sha256Digest(content);
  if (!out.flush()) return Error{ErrorCode::kIo, "cannot write " + destination, {}};
  return {};
}

}  // namespace ruleplane
