// Request: one thing an adapter sends or does, built as data before it is
// sent. The same object is journaled, printed by a dry run and performed, so
// that a dry run shows exactly what the real run would do.
//
//   Request{Request::Kind::kHttp, "POST", "https://127.0.0.1:2379/v3/cluster/member/add",
//           {}, R"({"peerURLs":["https://10.0.0.3:2380"]})"}
#pragma once

#include <string>
#include <vector>

#include "engine/common/value.h"

namespace ruleplane {

struct Request {
  enum class Kind { kHttp, kCommand, kFile };
  Kind kind = Kind::kHttp;
  std::string verb;               // HTTP method; the program; the file operation (rename, mkdir, write, ...)
  std::string target;             // URL; (unused for commands); path
  std::vector<std::string> args;  // command arguments; a rename's destination
  std::string body;               // HTTP body; what a write writes, summarised
  bool mutates = true;            // false for reads: they run in a dry run too, and change nothing
};

// One line: "POST https://.../v3/cluster/member/add {...}", "run etcdctl snapshot restore ...",
// "rename /var/etcd/data -> /var/etcd/data.20240501T100000Z".
std::string DescribeRequest(const Request& request);
Value RequestToValue(const Request& request);

// The requests of one step, in the order they were built, and whether they
// are sent: in a dry run a request that mutates is recorded and not sent.
class RequestLog {
 public:
  explicit RequestLog(bool dry_run = false) : dry_run_(dry_run) {}

  // Records `request`; true when the caller should now send it.
  bool Record(Request request);

  bool dry_run() const { return dry_run_; }
  const std::vector<Request>& requests() const { return requests_; }
  void Clear() { requests_.clear(); }

 private:
  bool dry_run_;
  std::vector<Request> requests_;
};

}  // namespace ruleplane
