#include "adapters/etcd/etcd_client.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "adapters/etcd/snapshot_stream.h"
#include "engine/common/json_value.h"
#include "platform/base64.h"
#include "platform/directory_sync.h"
#include "platform/line_splitter.h"
#include "platform/sha256_stream.h"

namespace ruleplane {
namespace {

// gRPC status codes etcd's gateway returns in {"code": n, "message": ...}.
constexpr int64_t kGrpcDeadlineExceeded = 4, kGrpcNotFound = 5, kGrpcFailedPrecondition = 9,
                  kGrpcOutOfRange = 11, kGrpcUnavailable = 14;

// A decimal uint64 ("0" to "18446744073709551615", nothing else), as etcd
// writes int64 and uint64 (a JSON string) or as a JSON integer.
std::optional<uint64_t> Decimal(const Value& value) {
  if (value.is_int())
    return value.int_value() >= 0 ? std::optional<uint64_t>(value.int_value()) : std::nullopt;
  if (!value.is_string()) return std::nullopt;
  const std::string& text = value.string_value();
  if (text.empty() || text.size() > 20) return std::nullopt;
  uint64_t number = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (number > (UINT64_MAX - digit) / 10) return std::nullopt;
    number = number * 10 + digit;
  }
  return number;
}

// int64 and uint64 arrive as JSON strings; absent (or not a number) means 0.
uint64_t Unsigned(const Value& map, std::string_view name) {
  const Value* value = map.Find(name);
  return value != nullptr ? Decimal(*value).value_or(0) : 0;
}
int64_t Signed(const Value& map, std::string_view name) { return static_cast<int64_t>(Unsigned(map, name)); }

std::string Text(const Value& map, std::string_view name) {
  const Value* value = map.Find(name);
  return value != nullptr && value->is_string() ? value->string_value() : std::string();
}

bool Flag(const Value& map, std::string_view name) {
  const Value* value = map.Find(name);
  return value != nullptr && value->is_bool() && value->bool_value();
}

std::vector<std::string> Texts(const Value& map, std::string_view name) {
  std::vector<std::string> texts;
  const Value* list = map.Find(name);
  if (list == nullptr || !list->is_list()) return texts;
  for (const Value& item : list->list_value()) {
    if (item.is_string()) texts.push_back(item.string_value());
  }
  return texts;
}

std::string Bytes(const Value& map, std::string_view name) {
  auto decoded = Base64Decode(Text(map, name));
  return decoded ? *decoded : std::string();
}

EtcdMember MemberFrom(const Value& value) {
  EtcdMember member;
  member.id = Unsigned(value, "ID");
  member.name = Text(value, "name");
  member.peer_urls = Texts(value, "peerURLs");
  member.client_urls = Texts(value, "clientURLs");
  member.is_learner = Flag(value, "isLearner");
  return member;
}

KeyValue KeyValueFrom(const Value& value) {
  KeyValue kv;
  kv.key = Bytes(value, "key");
  kv.value = Bytes(value, "value");
  kv.create_revision = Signed(value, "create_revision");
  kv.mod_revision = Signed(value, "mod_revision");
  kv.version = Signed(value, "version");
  kv.lease = Signed(value, "lease");
  return kv;
}

std::string Quoted(std::string_view text) { return FormatJson(Value::String(std::string(text))); }

// The error an answer that is not 200 means, from its gRPC code when it has one.
Error ErrorFromReply(long status, const std::string& what, const std::string& body) {
  auto parsed = ParseJson(body);
  if (!parsed.ok() || parsed->Find("code") == nullptr) return HttpStatusError(status, what, body);
  const int64_t code = Signed(*parsed, "code");
  std::string message = Text(*parsed, "message");
  if (message.empty()) message = Text(*parsed, "error");
  const std::string text = what + ": " + message;
  switch (code) {
    case kGrpcUnavailable:
      return Error{ErrorCode::kUnavailable, text, {}};
    case kGrpcDeadlineExceeded:
      return Error{ErrorCode::kDeadlineExceeded, text, {}};
    case kGrpcNotFound:
      return Error{ErrorCode::kNotFound, text, {}};
    case kGrpcOutOfRange:
      return Error{ErrorCode::kFailedPrecondition, text, {}};
    case kGrpcFailedPrecondition:
      // A learner that has not caught up with the leader yet: promoting it again later works.
      if (message.find("in sync with leader") != std::string::npos)
        return Error{ErrorCode::kUnavailable, text, {}};
      return Error{ErrorCode::kFailedPrecondition, text, {}};
    default:
      if (message.find("unhealthy cluster") != std::string::npos ||
          message.find("not supported for learner") != std::string::npos ||
          message.find("leader changed") != std::string::npos ||
          message.find("timed out") != std::string::npos) {
        return Error{ErrorCode::kUnavailable, text, {}};
      }
      return HttpStatusError(status, what, body);
  }
}

Error AnswerError(const std::string& what) { return Error{ErrorCode::kUnavailable, what, {}}; }

Result<std::vector<EtcdMember>> MemberListFrom(const Value& body) {
  if (!body.is_map()) return AnswerError("etcd's member list answer is not a JSON object");
  const Value* list = body.Find("members");
  if (list == nullptr || !list->is_list() || list->list_value().empty())
    return AnswerError("etcd's member list answer has no members (a cluster has one at least)");
  std::vector<EtcdMember> members;
  for (const Value& item : list->list_value()) {
    const Value* id = item.Find("ID");
    if (!item.is_map() || id == nullptr || Decimal(*id).value_or(0) == 0)
      return AnswerError("etcd's member list answer has a member without a valid ID");
    members.push_back(MemberFrom(item));
  }
  return members;
}

Result<EtcdStatus> StatusFrom(const Value& body, const std::string& endpoint) {
  if (!body.is_map()) return AnswerError("etcd's status answer is not a JSON object");
  EtcdStatus status;
  status.endpoint = endpoint;
  const Value* header = body.Find("header");
  if (header != nullptr) {
    status.member_id = Unsigned(*header, "member_id");
    status.cluster_id = Unsigned(*header, "cluster_id");
    status.revision = Signed(*header, "revision");
  }
  status.version = Text(body, "version");
  status.leader = Unsigned(body, "leader");
  status.raft_index = Unsigned(body, "raftIndex");
  status.raft_term = Unsigned(body, "raftTerm");
  status.db_size = Signed(body, "dbSize");
  status.is_learner = Flag(body, "isLearner");
  status.errors = Texts(body, "errors");
  return status;
}

// Whether the member that sent this member list is a learner in it.
bool AnsweredByLearner(const Value& body, const std::vector<EtcdMember>& members) {
  const Value* header = body.Find("header");
  const uint64_t answering = header != nullptr ? Unsigned(*header, "member_id") : 0;
  return std::any_of(members.begin(), members.end(),
                     [&](const EtcdMember& m) { return m.id == answering && m.is_learner; });
}

}  // namespace

Result<std::vector<EtcdMember>> ParseMemberList(std::string_view answer) {
  auto parsed = ParseJson(answer);
  if (!parsed.ok()) return AnswerError("etcd's member list answer is not JSON: " + parsed.error().message);
  return MemberListFrom(*parsed);
}

Result<EtcdStatus> ParseEtcdStatus(std::string_view answer, const std::string& endpoint) {
  auto parsed = ParseJson(answer);
  if (!parsed.ok()) return AnswerError("etcd's status answer is not JSON: " + parsed.error().message);
  return StatusFrom(*parsed, endpoint);
}

// One call: built as a Request, recorded, then sent to each endpoint in turn
// (or to `only` when given) until one answers.
struct EtcdClient::Reply {
  bool sent = false;
  Value body;
};

Result<EtcdClient::Reply> EtcdClient::Call(const std::string& only, const std::string& path,
                                           const std::string& body, bool mutates, RequestLog& log,
                                           std::chrono::milliseconds timeout, size_t max_answer_bytes) {
  const std::vector<std::string> endpoints =
      only.empty() ? config_.endpoints : std::vector<std::string>{only};
  if (endpoints.empty()) return Error{ErrorCode::kInvalidArgument, "no etcd endpoint is configured", {}};
  Reply reply;
  if (!log.Record(Request{Request::Kind::kHttp, "POST", endpoints.front() + path, {}, body, mutates}))
    return reply;
  Error last{ErrorCode::kUnavailable, "", {}};
  for (const std::string& endpoint : endpoints) {
    const std::string url = endpoint + path;
    const HttpLimits limits{
        .max_body_bytes = max_answer_bytes,
        .name = max_answer_bytes == kEtcdShortAnswerBytes ? "etcd's short answers" : "etcd's range answers"};
    auto response =
        http_.Send("POST", url, body, timeout.count() > 0 ? timeout : config_.timeout, {}, limits);
    if (!response.ok()) {
      last = response.error();
    } else if (response->status != 200) {
      last = ErrorFromReply(response->status, "POST " + url, response->body);
    } else {
      auto parsed = ParseJson(response->body);
      if (!parsed.ok())
        return Error{ErrorCode::kUnavailable, "POST " + url + ": not JSON: " + parsed.error().message, {}};
      reply.sent = true;
      reply.body = std::move(*parsed);
      return reply;
    }
    if (last.code != ErrorCode::kUnavailable && last.code != ErrorCode::kDeadlineExceeded) break;
  }
  return last;
}

EtcdClient::EtcdClient(EtcdClientConfig config) : config_(std::move(config)), http_(config_.tls) {
  http_.set_connect_to(config_.connect_to);
}

EtcdClient::EtcdClient(const EtcdClient& other) : EtcdClient(other.config_) {
  http_.set_cancel(other.http_.cancel());
  http_.set_guard(other.http_.guard());
}

Result<std::vector<EtcdMember>> EtcdClient::MemberList(RequestLog& log, const std::string& endpoint) {
  auto reply = Call(endpoint, "/v3/cluster/member/list", "{}", false, log);
  if (!reply.ok()) return reply.error();
  if (!reply->sent) return std::vector<EtcdMember>{};
  auto members = MemberListFrom(reply->body);
  if (!members.ok()) return AnswerError(config_.endpoints.front() + ": " + members.error().message);
  if (!endpoint.empty()) return members;
  // etcd 3.4 answers a member list from the answering member's own applied
  // state. A learner applies a membership change (its own promotion) after
  // the voters did, so a voter's answer is taken when one gives it.
  if (!AnsweredByLearner(reply->body, *members)) return members;
  for (size_t i = 1; i < config_.endpoints.size(); ++i) {
    auto other = Call(config_.endpoints[i], "/v3/cluster/member/list", "{}", false, log);
    if (!other.ok() || !other->sent) continue;
    auto voters_view = MemberListFrom(other->body);
    if (voters_view.ok() && !AnsweredByLearner(other->body, *voters_view)) return voters_view;
  }
  return members;
}

Result<EtcdMember> EtcdClient::MemberAdd(const std::vector<std::string>& peer_urls, bool as_learner,
                                         RequestLog& log) {
  std::string urls;
  for (const std::string& url : peer_urls) urls += (urls.empty() ? "" : ",") + Quoted(url);
  const std::string body = "{\"peerURLs\":[" + urls + "]" + (as_learner ? ",\"isLearner\":true}" : "}");
  auto reply = Call("", "/v3/cluster/member/add", body, true, log);
  if (!reply.ok()) return reply.error();
  if (!reply->sent) return EtcdMember{};
  const Value* member = reply->body.Find("member");
  return member != nullptr ? MemberFrom(*member) : EtcdMember{};
}

Status EtcdClient::MemberUpdate(uint64_t id, const std::vector<std::string>& peer_urls, RequestLog& log) {
  std::string urls;
  for (const std::string& url : peer_urls) urls += (urls.empty() ? "" : ",") + Quoted(url);
  const std::string body = "{\"ID\":\"" + std::to_string(id) + "\",\"peerURLs\":[" + urls + "]}";
  auto reply = Call("", "/v3/cluster/member/update", body, true, log);
  if (!reply.ok()) return reply.error();
  return {};
}

Status EtcdClient::MemberRemove(uint64_t id, RequestLog& log) {
  auto reply = Call("", "/v3/cluster/member/remove", "{\"ID\":\"" + std::to_string(id) + "\"}", true, log);
  if (!reply.ok()) return reply.error();
  return {};
}

Status EtcdClient::MemberPromote(uint64_t id, RequestLog& log) {
  auto reply = Call("", "/v3/cluster/member/promote", "{\"ID\":\"" + std::to_string(id) + "\"}", true, log);
  if (!reply.ok()) return reply.error();
  return {};
}

Result<EtcdStatus> EtcdClient::MemberStatus(const std::string& endpoint, RequestLog& log) {
  auto reply = Call(endpoint, "/v3/maintenance/status", "{}", false, log);
  if (!reply.ok()) return reply.error();
  if (!reply->sent) {
    EtcdStatus status;
    status.endpoint = endpoint;
    return status;
  }
  auto status = StatusFrom(reply->body, endpoint);
  if (!status.ok()) return AnswerError(endpoint + ": " + status.error().message);
  status->answer = reply->body;
  return status;
}

Status EtcdClient::Defragment(const std::string& endpoint, RequestLog& log) {
  auto reply = Call(endpoint, "/v3/maintenance/defragment", "{}", true, log, config_.timeout * 10);
  if (!reply.ok()) return reply.error();
  return {};
}

Status EtcdClient::MoveLeader(const std::string& endpoint, uint64_t transferee, RequestLog& log) {
  auto reply = Call(endpoint, "/v3/maintenance/transfer-leadership",
                    "{\"targetID\":\"" + std::to_string(transferee) + "\"}", true, log);
  if (!reply.ok()) return reply.error();
  return {};
}

Result<std::pair<int64_t, std::vector<KeyValue>>> EtcdClient::Range(const std::string& key,
                                                                    const std::string& range_end,
                                                                    int64_t revision, RequestLog& log) {
  std::string body = "{\"key\":\"" + Base64Encode(key) + "\"";
  if (!range_end.empty()) body += ",\"range_end\":\"" + Base64Encode(range_end) + "\"";
  if (revision > 0) body += ",\"revision\":\"" + std::to_string(revision) + "\"";
  body += "}";
  auto reply =
      Call("", "/v3/kv/range", body, false, log, std::chrono::milliseconds(0), kEtcdRangeAnswerBytes);
  if (!reply.ok()) return reply.error();
  std::pair<int64_t, std::vector<KeyValue>> result;
  if (const Value* header = reply->body.Find("header")) result.first = Signed(*header, "revision");
  if (const Value* kvs = reply->body.Find("kvs"); kvs != nullptr && kvs->is_list()) {
    for (const Value& item : kvs->list_value()) result.second.push_back(KeyValueFrom(item));
  }
  return result;
}

Result<int64_t> EtcdClient::Put(const std::string& key, const std::string& value, RequestLog& log) {
  auto reply =
      Call("", "/v3/kv/put",
           "{\"key\":\"" + Base64Encode(key) + "\",\"value\":\"" + Base64Encode(value) + "\"}", true, log);
  if (!reply.ok()) return reply.error();
  const Value* header = reply->body.Find("header");
  return header != nullptr ? Signed(*header, "revision") : int64_t{0};
}

Result<int64_t> EtcdClient::Txn(const std::vector<EtcdEvent>& events, RequestLog& log) {
  std::string operations;
  for (const EtcdEvent& event : events) {
    operations += operations.empty() ? "" : ",";
    if (event.type == EtcdEvent::Type::kDelete) {
      operations += "{\"request_delete_range\":{\"key\":\"" + Base64Encode(event.kv.key) + "\"}}";
    } else {
      operations += "{\"request_put\":{\"key\":\"" + Base64Encode(event.kv.key) + "\",\"value\":\"" +
                    Base64Encode(event.kv.value) + "\"}}";
    }
  }
  auto reply = Call("", "/v3/kv/txn", "{\"success\":[" + operations + "]}", true, log);
  if (!reply.ok()) return reply.error();
  const Value* header = reply->body.Find("header");
  return header != nullptr ? Signed(*header, "revision") : int64_t{0};
}

Status EtcdClient::Compact(int64_t revision, RequestLog& log) {
  auto reply = Call("", "/v3/kv/compaction",
                    "{\"revision\":\"" + std::to_string(revision) + "\",\"physical\":true}", true, log);
  if (!reply.ok()) return reply.error();
  return {};
}

Result<int64_t> EtcdClient::Snapshot(const std::string& endpoint, const std::string& destination,
                                     RequestLog& log) {
  const std::string url = endpoint + "/v3/maintenance/snapshot";
  if (!log.Record(Request{Request::Kind::kHttp, "POST", url, {destination}, "{}", true})) return int64_t{0};
  RequestLog status_log;
  auto status = MemberStatus(endpoint, status_log);
  if (!status.ok()) return status.error();

  const std::string part = destination + ".part";
  FILE* file = std::fopen(part.c_str(), "wb");
  if (file == nullptr) return Error{ErrorCode::kIo, "cannot create " + part, {}};
  // The database as etcd sent it, bounded by what it said its size was (it
  // may grow a little while it is sent).
  const uint64_t max_bytes =
      2 * static_cast<uint64_t>(std::max<int64_t>(status->db_size, 0)) + 64 * 1024 * 1024;
  SnapshotStreamParser parser;
  SnapshotTrailerCheck trailer;
  std::string head;  // the answer's first bytes, for the error of an answer that is not 200
  Status failure;
  auto sink = [&](std::string_view blob) -> Status {
    if (parser.blob_bytes() > max_bytes) {
      return Error{ErrorCode::kUnavailable,
                   "the snapshot stream is longer than " + std::to_string(max_bytes) +
                       " bytes (the bound: twice the dbSize etcd reported, " +
                       std::to_string(status->db_size) + ", plus 64 MiB); stopped there",
                   {}};
    }
    trailer.Update(blob);
    if (std::fwrite(blob.data(), 1, blob.size(), file) != blob.size())
      return Error{ErrorCode::kIo, "cannot write " + part, {}};
    return {};
  };
  auto on_data = [&](std::string_view data) {
    if (head.size() < 4096) head.append(data.substr(0, 4096 - head.size()));
    failure = parser.Feed(data, sink);
    return failure.ok();
  };
  const HttpLimits limits{.max_body_bytes = 0,
                          .name = "etcd's snapshot stream",
                          .low_speed_bytes_per_second = config_.snapshot_low_speed_bytes_per_second,
                          .low_speed_window = config_.snapshot_low_speed_window};
  auto streamed = http_.Stream("POST", url, "{}", config_.timeout * 30, on_data, {}, limits);
  if (streamed.ok() && *streamed == 200 && failure.ok()) failure = parser.Finish(sink);
  const bool flushed = std::fflush(file) == 0 && fsync(fileno(file)) == 0;
  std::fclose(file);
  auto discard = [&](Error error) {
    std::filesystem::remove(part);  // our own partial download
    return error;
  };
  if (!streamed.ok()) return discard(streamed.error());
  if (*streamed != 200) return discard(ErrorFromReply(*streamed, "POST " + url, head));
  if (!failure.ok()) {
    Error error = failure.error();
    if (error.code == ErrorCode::kUnavailable) error.message = "POST " + url + ": " + error.message;
    return discard(error);
  }
  if (!flushed) return discard(Error{ErrorCode::kIo, "cannot write " + part, {}});
  if (Status verified = trailer.Finish("the snapshot from " + endpoint); !verified.ok()) {
    return discard(verified.error());
  }
  if (std::rename(part.c_str(), destination.c_str()) != 0)
    return discard(Error{ErrorCode::kIo, "cannot rename " + part, {}});
  if (Status synced = SyncDirectory(std::filesystem::path(destination).parent_path().string());
      !synced.ok()) {
    return synced.error();
  }
  return status->revision;
}

Result<int64_t> EtcdClient::Watch(int64_t start_revision, std::chrono::milliseconds timeout,
                                  const std::function<bool(const std::vector<EtcdEvent>&)>& on_events) {
  const std::string body = "{\"create_request\":{\"key\":\"" + Base64Encode(std::string(1, '\0')) +
                           "\",\"range_end\":\"" + Base64Encode(std::string(1, '\0')) +
                           "\",\"start_revision\":\"" + std::to_string(start_revision) + "\"}}";
  Error last{ErrorCode::kInvalidArgument, "no etcd endpoint is configured", {}};
  for (const std::string& endpoint : config_.endpoints) {
    const std::string url = endpoint + "/v3/watch";
    int64_t delivered = start_revision - 1;
    LineSplitter lines(kEtcdWatchLineBytes, "etcd's watch stream");
    std::string head;  // the answer's first bytes, for the error of an answer that is not 200
    std::optional<Error> failure;
    auto on_line = [&](std::string_view line) {
      auto message = ParseJson(line);
      const Value* result = message.ok() ? message->Find("result") : nullptr;
      if (result == nullptr) {
        failure =
            Error{ErrorCode::kUnavailable, "POST " + url + ": an unexpected message in the watch stream", {}};
        return false;
      }
      if (Signed(*result, "compact_revision") > 0) {
        failure = Error{ErrorCode::kFailedPrecondition,
                        "revision " + std::to_string(start_revision) + " is compacted (the oldest kept is " +
                            std::to_string(Signed(*result, "compact_revision")) + "): take a full snapshot",
                        {}};
        return false;
      }
      if (Flag(*result, "canceled")) {
        failure = Error{ErrorCode::kUnavailable,
                        "POST " + url + ": the watch was canceled: " + Text(*result, "cancel_reason"),
                        {}};
        return false;
      }
      const Value* list = result->Find("events");
      if (list == nullptr || !list->is_list() || list->list_value().empty()) return true;
      std::vector<EtcdEvent> events;
      for (const Value& item : list->list_value()) {
        EtcdEvent event;
        event.type = Text(item, "type") == "DELETE" ? EtcdEvent::Type::kDelete : EtcdEvent::Type::kPut;
        if (const Value* kv = item.Find("kv")) event.kv = KeyValueFrom(*kv);
        events.push_back(std::move(event));
      }
      delivered = events.back().kv.mod_revision;
      return on_events(events);
    };
    auto on_data = [&](std::string_view data) {
      if (head.size() < 4096) head.append(data.substr(0, 4096 - head.size()));
      auto fed = lines.Feed(data, on_line);
      if (!fed.ok()) failure = Error{ErrorCode::kUnavailable, "POST " + url + ": " + fed.error().message, {}};
      return fed.ok() && *fed;
    };
    auto streamed = http_.Stream("POST", url, body, timeout, on_data);
    if (streamed.ok() && *streamed != 200) {
      last = ErrorFromReply(*streamed, "POST " + url, head);
    } else if (failure) {
      return *failure;
    } else if (streamed.ok()) {
      return delivered;
    } else {
      last = streamed.error();
    }
    if (delivered >= start_revision) return delivered;  // some events arrived: the caller decides
    if (last.code != ErrorCode::kUnavailable && last.code != ErrorCode::kDeadlineExceeded) break;
  }
  return last;
}

std::string MemberIdHex(uint64_t id) {
  char text[17];
  std::snprintf(text, sizeof text, "%llx", static_cast<unsigned long long>(id));
  return text;
}

Result<uint64_t> ParseMemberIdHex(std::string_view hex) {
  if (hex.empty() || hex.size() > 16)
    return Error{ErrorCode::kInvalidArgument, "not a member ID: '" + std::string(hex) + "'", {}};
  uint64_t id = 0;
  for (char c : hex) {
    int digit = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
    if (digit < 0)
      return Error{ErrorCode::kInvalidArgument, "not a member ID: '" + std::string(hex) + "'", {}};
    id = id << 4 | static_cast<uint64_t>(digit);
  }
  return id;
}

}  // namespace ruleplane
