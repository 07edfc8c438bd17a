#include "member/member_api.h"

#include "engine/common/json_value.h"
#include "engine/common/time_util.h"

namespace ruleplane {
namespace {

constexpr const char* kJson = "application/json";

HttpAnswer Health(bool healthy) {
  return {healthy ? 200 : 503, kJson, healthy ? R"({"health":true})" : R"({"health":false})"};
}

// The value of `key` in "a=1&final=true"; nullopt when absent.
std::optional<std::string> QueryValue(const std::string& query, const std::string& key) {
  size_t at = 0;
  while (at <= query.size()) {
    const size_t end = std::min(query.find('&', at), query.size());
    const std::string pair = query.substr(at, end - at);
    const size_t equals = pair.find('=');
    if (pair.substr(0, equals) == key) return equals == std::string::npos ? "" : pair.substr(equals + 1);
    at = end + 1;
  }
  return std::nullopt;
}

// Go's strconv.ParseBool.
std::optional<bool> ParseGoBool(const std::string& text) {
  for (const char* yes : {"1", "t", "T", "TRUE", "true", "True"})
    if (text == yes) return true;
  for (const char* no : {"0", "f", "F", "FALSE", "false", "False"})
    if (text == no) return false;
  return std::nullopt;
}

std::string RfcTime(int64_t unix_seconds) {
  auto stamp = TimestampFromUnixSeconds(unix_seconds);
  return stamp.ok() ? FormatRfc3339(*stamp) : "0001-01-01T00:00:00Z";
}

// A non-leader's request, sent on to the leader's agent once it says it is healthy.
HttpAnswer Forward(const HttpRequest& request, const RequestedSnapshot& answer, MemberApiBackend& backend,
                   int server_port, bool server_tls) {
  const std::string leader = LeaderAgentUrl(answer.leader_client_url, server_port, server_tls);
  if (leader.empty()) return {405, "text/plain", "this member does not lead and the leader is unknown\n"};
  auto health = backend.Send("GET", leader + "/healthz");
  const bool healthy = health.ok() && health->body.find(R"("health":true)") != std::string::npos;
  if (!healthy) return {405, "text/plain", "the leader's agent at " + leader + " is not healthy\n"};
  auto forwarded = backend.Send(request.method,
                                leader + request.path + (request.query.empty() ? "" : "?" + request.query));
  if (!forwarded.ok()) {
    return {405, "text/plain", "the leader's agent at " + leader + ": " + forwarded.error().message + "\n"};
  }
  return *forwarded;
}

HttpAnswer TakeSnapshot(const HttpRequest& request, const SnapshotRequest& wanted, MemberApiBackend& backend,
                        int server_port, bool server_tls) {
  const RequestedSnapshot answer = backend.TakeSnapshot(wanted);
  switch (answer.outcome) {
    case RequestedSnapshot::Outcome::kTaken:
      return {200, kJson, FormatJson(SnapshotValue(answer.snapshot, backend.StorePrefix()))};
    case RequestedSnapshot::Outcome::kNothingNew:
      return {200, kJson, "null"};
    case RequestedSnapshot::Outcome::kNotLeader:
      return Forward(request, answer, backend, server_port, server_tls);
    case RequestedSnapshot::Outcome::kTooSoon:
      return {429, "text/plain", answer.error + "\n"};
    case RequestedSnapshot::Outcome::kFailed:
      break;
  }
  return {500, "text/plain", answer.error + "\n"};
}

}  // namespace

Value SnapshotValue(const StoredSnapshot& snapshot, const std::string& store_prefix) {
  // "v1/Backup-<unix>/<name>" or "v2/<name>".
  const std::string layout = snapshot.path.substr(0, snapshot.path.find('/'));
  const size_t name_at = snapshot.path.rfind('/');
  const size_t dir_at = snapshot.path.find('/');
  const std::string snap_dir = name_at != std::string::npos && dir_at != name_at
                                   ? snapshot.path.substr(dir_at + 1, name_at - dir_at - 1)
                                   : "";
  auto text = [](std::string value) { return Value::String(std::move(value)); };
  return Value::MakeMap({
      {text("createdOn"), text(RfcTime(snapshot.created_on))},
      {text("immutabilityExpriyTime"), text("0001-01-01T00:00:00Z")},
      {text("versionID"), Value::Null()},
      {text("kind"), text(snapshot.kind)},
      {text("snapDir"), text(snap_dir)},
      {text("snapName"), text(snapshot.name)},
      {text("prefix"), text((store_prefix.empty() ? "" : store_prefix + "/") + layout + "/")},
      {text("compressionSuffix"), text(snapshot.compression_suffix)},
      {text("startRevision"), Value::Int(snapshot.start_revision)},
      {text("lastRevision"), Value::Int(snapshot.last_revision)},
      {text("isChunk"), Value::Bool(false)},
      {text("isFinal"), Value::Bool(snapshot.is_final)},
  });
}

std::string LatestSnapshotsJson(const BackupStoreListing& listing) {
  const size_t full = listing.LatestFullIndex();
  Value::List deltas;
  for (size_t i = full == listing.snapshots.size() ? 0 : full + 1; i < listing.snapshots.size(); ++i)
    deltas.push_back(SnapshotValue(listing.snapshots[i], listing.prefix));
  return FormatJson(Value::MakeMap({
      {Value::String("fullSnapshot"), full == listing.snapshots.size()
                                          ? Value::Null()
                                          : SnapshotValue(listing.snapshots[full], listing.prefix)},
      {Value::String("deltaSnapshots"), deltas.empty() ? Value::Null() : Value::MakeList(std::move(deltas))},
  }));
}

std::string LeaderAgentUrl(const std::string& leader_client_url, int server_port, bool server_tls) {
  const size_t scheme_end = leader_client_url.find("://");
  if (scheme_end == std::string::npos) return "";
  const size_t host_at = scheme_end + 3;
  const size_t host_end = std::min(leader_client_url.find('/', host_at), leader_client_url.size());
  std::string host = leader_client_url.substr(host_at, host_end - host_at);
  // Without the port: "[::1]:2379" keeps its brackets, "10.0.0.1:2379" loses ":2379".
  const size_t colon = host.rfind(':');
  if (colon != std::string::npos && host.find(']', colon) == std::string::npos) host.resize(colon);
  if (host.empty()) return "";
  return (server_tls ? "https://" : "http://") + host + ":" + std::to_string(server_port);
}

HttpReply ServeMemberApi(const HttpRequest& request, MemberApiBackend& backend, int server_port,
                         bool server_tls, bool client_certificates) {
  if (request.path == "/healthz") return Health(backend.Healthy());
  if (request.path == "/metrics") {
    return HttpAnswer{200, "text/plain; version=0.0.4; charset=utf-8", backend.MetricsText()};
  }
  const bool full = request.path == "/snapshot/full";
  if (full || request.path == "/snapshot/delta" || request.path == "/snapshot/latest") {
    if (client_certificates && !request.client_verified) {
      return HttpAnswer{403, "text/plain",
                        "a snapshot is asked for with a client certificate of the agents' client CA\n"};
    }
    if (!backend.BacksUp()) return HttpAnswer{405, "text/plain", "no backup store is configured\n"};
  }
  if (full || request.path == "/snapshot/delta") {
    SnapshotRequest wanted;
    wanted.full = full;
    if (const auto final = QueryValue(request.query, "final"); full && final && !final->empty()) {
      const std::optional<bool> parsed = ParseGoBool(*final);
      if (!parsed) return HttpAnswer{400, "text/plain", "final must be a boolean, got \"" + *final + "\"\n"};
      wanted.final = *parsed;
    }
    return HttpReply::Slow([request, wanted, &backend, server_port, server_tls] {
      return TakeSnapshot(request, wanted, backend, server_port, server_tls);
    });
  }
  if (request.path == "/snapshot/latest") {
    return HttpReply::Slow([&backend]() -> HttpAnswer {
      auto listing = backend.ListStore();
      if (!listing.ok()) return {500, "text/plain", listing.error().message + "\n"};
      // Another cluster's newer snapshots on the prefix (a member that split
      // off, an Etcd created again) are not this cluster's latest: the
      // controller's TriggerFullSnapshot would read them as its backup.
      if (const uint64_t cluster = backend.ClusterId(); cluster != 0) listing->KeepCluster(cluster);
      return {200, kJson, LatestSnapshotsJson(*listing)};
    });
  }
  return HttpAnswer{404, "text/plain", "not found\n"};
}

}  // namespace ruleplane
