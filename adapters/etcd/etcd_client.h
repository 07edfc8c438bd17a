// EtcdClient: etcd's v3 JSON gateway (grpc-gateway, `/v3/...`) over libcurl,
// for etcd 3.4 and later: the cluster's members, a member's status,
// defragment, move leader, snapshot, watch, range, txn, compact. (HashKV is not on
// etcd 3.4's gateway: see etcdctl_hashkv.h.)
//
// Several endpoints: a call goes to the first endpoint that answers and moves
// on when one does not (connection refused, timeout, 5xx); a call that names
// one endpoint (MemberStatus, Defragment, Snapshot) goes to that one only.
// Every call has a timeout. Every request is first built as a Request and
// recorded in `log`; when the log says not to send (a dry run, a request that
// mutates), the call returns a default value (an empty member, revision 0)
// without sending. Reads are sent in a dry run too.
//
// etcd's gateway encodes int64 as JSON strings and bytes as base64; this
// class hides both.
//
// Bounds on etcd's answers (an endpoint may be anyone's; docs/bounds.md, "Network
// answers"), each checked while the answer arrives and failing the call with
// kUnavailable naming the bound:
//   - short answers (member list, status, member add/remove/promote, move
//     leader, put, txn, compaction, defragment, any error): 1 MiB (kEtcdShortAnswerBytes;
//     a member is ~200 bytes, a status ~500); time: the call's timeout;
//   - Range: 64 MiB (kEtcdRangeAnswerBytes); time: the call's timeout;
//   - the snapshot stream: one message 4 MiB (kMaxSnapshotLineBytes), the
//     whole stream twice the dbSize etcd reported just before plus 64 MiB,
//     fewer than 1 KiB/s over 15 s ends it (EtcdClientConfig), 30 timeouts in
//     all;
//   - the watch stream: one message 64 MiB (kEtcdWatchLineBytes), no speed
//     bound (a watch is quiet while nothing changes), the caller's timeout.
// The member list and status answers are checked as they are read
// (ParseMemberList, ParseEtcdStatus): a list without members, a member
// without a valid ID, an answer that is not an object is kUnavailable.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "adapters/request.h"
#include "engine/common/error.h"
#include "engine/common/value.h"
#include "platform/http_client.h"

namespace ruleplane {

struct EtcdClientConfig {
  std::vector<std::string> endpoints;  // client URLs, "http://127.0.0.1:2379"
  TlsConfig tls;
  std::chrono::milliseconds timeout{std::chrono::seconds(10)};  // per call (defragment: 10x, a snapshot: 30x)
  // A snapshot stream slower than this on average over the window fails.
  long snapshot_low_speed_bytes_per_second = 1024;
  std::chrono::seconds snapshot_low_speed_window{15};
  // "HOST:PORT:ADDRESS:PORT" each (HttpClient::set_connect_to): members named
  // by their DNS names, reached at their Pods' IPs.
  std::vector<std::string> connect_to = {};
};

inline constexpr size_t kEtcdShortAnswerBytes = 1024 * 1024;
inline constexpr size_t kEtcdRangeAnswerBytes = 64 * 1024 * 1024;
inline constexpr size_t kEtcdWatchLineBytes = 64 * 1024 * 1024;

struct EtcdMember {
  uint64_t id = 0;
  std::string name;  // "" for a member added but not started yet
  std::vector<std::string> peer_urls;
  std::vector<std::string> client_urls;
  bool is_learner = false;
};

struct EtcdStatus {
  std::string endpoint;
  Value answer;  // the answer as etcd's JSON gateway sent it (int64 fields as decimal strings)
  std::string version;
  uint64_t member_id = 0;
  uint64_t cluster_id = 0;
  uint64_t leader = 0;
  int64_t revision = 0;  // header.revision
  uint64_t raft_index = 0;
  uint64_t raft_term = 0;
  int64_t db_size = 0;
  bool is_learner = false;
  std::vector<std::string> errors;
};

struct KeyValue {
  std::string key;  // raw bytes
  std::string value;
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
  int64_t version = 0;
  int64_t lease = 0;
};

// One event of a watch or of a delta snapshot.
struct EtcdEvent {
  enum class Type { kPut, kDelete };
  Type type = Type::kPut;
  KeyValue kv;  // for a delete: key and mod_revision
};

// One client is used by one thread at a time (it keeps its connection).
class EtcdClient {
 public:
  explicit EtcdClient(EtcdClientConfig config);
  EtcdClient(const EtcdClient& other);  // the same configuration, guard and cancel; a connection of its own
  EtcdClient& operator=(const EtcdClient&) = delete;

  const EtcdClientConfig& config() const { return config_; }
  // While `*cancel` is true, a call in progress (a snapshot, a watch) ends
  // within about a second, as if the connection had ended.
  void set_cancel(const std::atomic<bool>* cancel) { http_.set_cancel(cancel); }
  // Asked right before each request goes out (HttpClient::set_guard).
  void set_guard(std::function<Status()> guard) { http_.set_guard(std::move(guard)); }

  // The members as a voter sees them when one answers (a learner's view of
  // its own promotion lags); with `endpoint`, as that member sees them.
  Result<std::vector<EtcdMember>> MemberList(RequestLog& log, const std::string& endpoint = "");
  // Adds a member with these peer URLs; returns it (its new ID).
  Result<EtcdMember> MemberAdd(const std::vector<std::string>& peer_urls, bool as_learner, RequestLog& log);
  // Replaces the peer URLs of the member with this ID (kNotFound: no such member).
  Status MemberUpdate(uint64_t id, const std::vector<std::string>& peer_urls, RequestLog& log);
  // kNotFound when no member has this ID.
  Status MemberRemove(uint64_t id, RequestLog& log);
  // A learner not yet in sync with the leader: kUnavailable (retry).
  Status MemberPromote(uint64_t id, RequestLog& log);

  // (Named MemberStatus: `Status` is the error-or-nothing type.)
  Result<EtcdStatus> MemberStatus(const std::string& endpoint, RequestLog& log);
  Status Defragment(const std::string& endpoint, RequestLog& log);
  // Asks the leader at `endpoint` to hand the leadership to the member
  // `transferee` (etcd refuses it from a member that does not lead).
  Status MoveLeader(const std::string& endpoint, uint64_t transferee, RequestLog& log);

  // Keys in [key, range_end) ("" = the key alone; "\0" = every key >= key).
  // `revision` 0 = the latest. Returns the header revision and the pairs.
  Result<std::pair<int64_t, std::vector<KeyValue>>> Range(const std::string& key,
                                                          const std::string& range_end, int64_t revision,
                                                          RequestLog& log);
  // Puts without a lease; the new revision.
  Result<int64_t> Put(const std::string& key, const std::string& value, RequestLog& log);
  // One transaction with the events as its success operations (puts without
  // leases, deletes of single keys); the revision after it.
  Result<int64_t> Txn(const std::vector<EtcdEvent>& events, RequestLog& log);
  // Physical: returns once the compaction is in the backend, so that a
  // defragmentation after it frees the space.
  Status Compact(int64_t revision, RequestLog& log);

  // Streams the endpoint's snapshot into `destination` (written to
  // destination + ".part", the trailing SHA-256 verified, fsynced, renamed).
  // The revision is returned (from a MemberStatus call made just before;
  // the file may hold later writes too). Records the request as mutating:
  // it writes `destination`, so a dry run does not download.
  Result<int64_t> Snapshot(const std::string& endpoint, const std::string& destination, RequestLog& log);

  // Watches every key from `start_revision` (inclusive) and calls `on_events`
  // with each response's events (with their revisions) until it returns
  // false, the connection ends, or `timeout` passes. Returns the revision of
  // the last event delivered (or start_revision - 1). A compacted start
  // revision: kFailedPrecondition.
  Result<int64_t> Watch(int64_t start_revision, std::chrono::milliseconds timeout,
                        const std::function<bool(const std::vector<EtcdEvent>&)>& on_events);

 private:
  struct Reply;
  Result<Reply> Call(const std::string& only, const std::string& path, const std::string& body, bool mutates,
                     RequestLog& log, std::chrono::milliseconds timeout = std::chrono::milliseconds(0),
                     size_t max_answer_bytes = kEtcdShortAnswerBytes);

  EtcdClientConfig config_;
  HttpClient http_;
};

// etcd's answers to /v3/cluster/member/list and /v3/maintenance/status
// (what MemberList and MemberStatus return), from the answer's text.
// kUnavailable naming what is wrong: not JSON, not an object, no member
// list, a member that is not an object or has no valid ID.
Result<std::vector<EtcdMember>> ParseMemberList(std::string_view answer);
Result<EtcdStatus> ParseEtcdStatus(std::string_view answer, const std::string& endpoint);

// "8e9e05c52164694d": lower-case hex without padding, as etcd and
// etcd-druid print member IDs (strconv.FormatUint(id, 16)), and back.
std::string MemberIdHex(uint64_t id);
Result<uint64_t> ParseMemberIdHex(std::string_view hex);

}  // namespace ruleplane
