#include "adapters/etcd/etcdctl_hashkv.h"

#include <nlohmann/json.hpp>

#include "platform/process.h"

namespace ruleplane {

Result<HashKvResult> EndpointHashKV(const std::string& endpoint, int64_t revision, const TlsConfig& tls,
                                    std::chrono::milliseconds timeout) {
  std::vector<std::string> argv = {
      "etcdctl", "--endpoints", endpoint, "endpoint", "hashkv", "--rev", std::to_string(revision),
      "-w",      "json"};
  if (!tls.ca_file.empty()) argv.insert(argv.end(), {"--cacert", tls.ca_file});
  if (!tls.cert_file.empty()) argv.insert(argv.end(), {"--cert", tls.cert_file, "--key", tls.key_file});
  if (tls.insecure_skip_verify) argv.push_back("--insecure-skip-tls-verify");
  auto run = RunCommand(argv, timeout);
  if (!run.ok()) return run.error();
  const std::string what =
      "etcdctl endpoint hashkv on " + endpoint + " at revision " + std::to_string(revision);
  if (run->exit_code != 0) return Error{ErrorCode::kUnavailable, what + ": " + run->err.substr(0, 500), {}};
  // [{"Endpoint": ..., "HashKV": {"header": {"revision": n, ...}, "hash": n, "compact_revision": n}}]; the
  // header's IDs are uint64 numbers, which nlohmann keeps exact.
  const nlohmann::json reply = nlohmann::json::parse(run->out, nullptr, false);
  if (!reply.is_array() || reply.size() != 1 || !reply[0].contains("HashKV")) {
    return Error{ErrorCode::kIo, what + " printed no HashKV: " + run->out.substr(0, 500), {}};
  }
  const nlohmann::json& hashkv = reply[0]["HashKV"];
  HashKvResult result;
  result.hash = hashkv.value("hash", uint32_t{0});
  result.compact_revision = hashkv.value("compact_revision", int64_t{0});
  if (hashkv.contains("header")) result.revision = hashkv["header"].value("revision", int64_t{0});
  return result;
}

}  // namespace ruleplane
