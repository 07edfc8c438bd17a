#include "observers/member_observer.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <sstream>

#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/local/data_dir.h"
#include "engine/common/time_util.h"
#include "engine/rule_file/yaml_value.h"
#include "platform/file_input.h"

namespace ruleplane {
namespace {

Result<Value> ReadYamlFile(const std::string& path) {
  auto text = ReadRegularFile(path, kMaxConfigFileBytes);
  if (!text.ok()) return text.error();
  try {
    YamlExpansion expansion;
    return YamlToValue(YAML::Load(*text), path, expansion);
  } catch (const YAML::Exception& error) {
    return Error{ErrorCode::kParse, path + ": " + error.what(), {}};
  }
}

// The member list and what the members say of their cluster now: its ID,
// its leader, and whether it has a live quorum: a majority of its voting
// members answers its status with that cluster ID and a leader (counted, not
// taken from one leader's word: a leader that lost its followers keeps
// answering for an election timeout). The ID is that of the members with a
// leader, else that of any member that answers: a member left alone still
// names its cluster, and the members that restart on their data of that
// cluster are the ones that bring its quorum back. Null when no endpoint
// answers, with `why` saying so; `revision` is the highest revision a
// member of that cluster answers with (0 when none does).
struct LiveCluster {
  Value value = Value::Null();
  std::string why;
  int64_t revision = 0;
};

LiveCluster ObserveLiveCluster(EtcdClient& cluster) {
  RequestLog reads;
  auto members = cluster.MemberList(reads);
  if (!members.ok())
    return {Value::Null(), "the member list could not be read: " + members.error().message, 0};
  int64_t revision = 0;
  Value::List list;
  std::string cluster_id, leader, leaderless_cluster_id;
  int voters = 0, answering = 0;
  for (const EtcdMember& member : *members) {
    Value::List peers, clients;
    for (const std::string& url : member.peer_urls) peers.push_back(Value::String(url));
    for (const std::string& url : member.client_urls) clients.push_back(Value::String(url));
    Value::Map entry = {{Value::String("ID"), Value::String(std::to_string(member.id))},
                        {Value::String("id"), Value::String(MemberIdHex(member.id))},
                        {Value::String("name"), Value::String(member.name)},
                        {Value::String("peerURLs"), Value::MakeList(std::move(peers))},
                        {Value::String("clientURLs"), Value::MakeList(std::move(clients))}};
    if (member.is_learner) entry.emplace_back(Value::String("isLearner"), Value::Bool(true));
    list.push_back(Value::MakeMap(std::move(entry)));
    if (member.is_learner) continue;
    ++voters;
    if (member.client_urls.empty()) continue;  // added, never started
    auto status = cluster.MemberStatus(member.client_urls.front(), reads);
    if (!status.ok()) continue;
    const std::string id = MemberIdHex(status->cluster_id);
    if (status->leader == 0) {
      if (leaderless_cluster_id.empty()) leaderless_cluster_id = id;
      continue;
    }
    if (cluster_id.empty()) cluster_id = id;
    if (id != cluster_id) continue;
    leader = MemberIdHex(status->leader);
    revision = std::max(revision, status->revision);
    ++answering;
  }
  if (cluster_id.empty()) cluster_id = leaderless_cluster_id;
  return {Value::MakeMap({{Value::String("members"), Value::MakeList(std::move(list))},
                          {Value::String("clusterID"), Value::String(cluster_id)},
                          {Value::String("leader"), Value::String(leader)},
                          {Value::String("voters"), Value::Int(voters)},
                          {Value::String("answering"), Value::Int(answering)},
                          {Value::String("quorate"), Value::Bool(2 * answering > voters)}}),
          "", revision};
}

// The largest size the cluster could have now: of the members the
// configuration template names, the Etcd's spec.replicas and its
// status.clusterSize. A scale-up changes the StatefulSet before the status,
// and a ConfigMap can lag the spec: the member of a cluster that is growing
// from one is not a single member (rules/etcd-backup-restore/NOTES.md, I20).
int64_t LargestClusterSize(const Value& config, const Value& etcd) {
  int64_t largest = 1;
  if (const Value* initial_cluster = config.Find("initial-cluster");
      initial_cluster != nullptr && initial_cluster->is_string()) {
    const std::string& text = initial_cluster->string_value();
    largest = 1 + static_cast<int64_t>(std::count(text.begin(), text.end(), ','));
  }
  for (const Value* size : {etcd.FindPath({"spec", "replicas"}), etcd.FindPath({"status", "clusterSize"})})
    if (size != nullptr && size->is_int()) largest = std::max(largest, size->int_value());
  return largest;
}

// The data directory's facts with `rebootstrap`: the marker it was re-created
// for (kRebootstrapRecordFile), or null.
Value WithRebootstrapRecord(Value facts, const std::string& data_dir) {
  Value record = Value::Null();
  if (auto text = ReadRegularFile(data_dir + "/" + kRebootstrapRecordFile, kMaxConfigFileBytes); text.ok()) {
    record = Value::String(text->substr(0, text->find('\n')));
  }
  Value::Map entries = facts.map_value();
  entries.emplace_back(Value::String("rebootstrap"), std::move(record));
  return Value::MakeMap(std::move(entries));
}

}  // namespace

Result<Snapshot> ObserveMember(const MemberObservationSources& sources, Timestamp now) {
  const LocalMember& member = sources.member;
  auto config = ReadYamlFile(member.config_template);
  if (!config.ok()) return config.error();
  Value previous;
  if (std::filesystem::exists(member.config_out)) {
    auto read = ReadYamlFile(member.config_out);
    if (!read.ok()) return read.error();
    previous = *read;
  }

  const LiveCluster live = sources.cluster != nullptr
                               ? ObserveLiveCluster(*sources.cluster)
                               : LiveCluster{Value::Null(), "no etcd endpoint was given or configured", 0};

  Value store = Value::MakeMap({{Value::String("reachable"), Value::Bool(false)}});
  int64_t latest_full_revision = 0;
  if (sources.store != nullptr) {
    // Judged against the cluster's revision when it answers.
    auto listing =
        sources.store->List(live.revision > 0 ? std::optional<int64_t>(live.revision) : std::nullopt);
    if (!listing.ok()) return listing.error();
    store = listing->ToValue();
    for (const StoredSnapshot& snapshot : listing->snapshots) {
      latest_full_revision = std::max(latest_full_revision, snapshot.last_revision);
    }
  }
  // Data behind the backups counts as invalid only for a single-member
  // cluster: a member of several catches up from the leader
  // (etcd-backup-restore's initializer checks the revision only when the
  // cluster is not multi-node).
  const bool multi_node = LargestClusterSize(*config, sources.etcd) > 1;
  auto data_dir =
      InspectDataDir(member.data_dir, multi_node ? 0 : latest_full_revision, member.namespace_name);
  if (!data_dir.ok()) return data_dir.error();

  Value::Map document = {
      {Value::String("apiVersion"), Value::String("ruleplane.dev/v1")},
      {Value::String("kind"), Value::String("EtcdMemberInitSnapshot")},
      {Value::String("observedAt"), Value::String(FormatRfc3339(now))},
      {Value::String("member"),
       Value::MakeMap({{Value::String("name"), Value::String(member.name)},
                       {Value::String("peerURL"), Value::String(member.peer_url)},
                       {Value::String("clientURL"), Value::String(member.client_url)}})},
      {Value::String("etcdConfig"), *config},
      {Value::String("previousConfig"), previous},
      {Value::String("etcd"), sources.etcd},
      {Value::String("memberList"), live.value},
      {Value::String("memberListError"), Value::String(live.why)},
      {Value::String("memberLease"), sources.member_lease},
      {Value::String("dataDir"), WithRebootstrapRecord(data_dir->ToValue(), member.data_dir)},
      {Value::String("backupStore"), store}};
  return SnapshotFromValue(Value::MakeMap(std::move(document)));
}

Result<std::vector<std::string>> ClientEndpointsOfConfig(const std::string& config_path,
                                                         const std::string& member_name, const Value& etcd) {
  auto config = ReadYamlFile(config_path);
  if (!config.ok()) return config.error();
  auto text = [&](const char* key) {
    const Value* value = config->is_map() ? config->Find(key) : nullptr;
    return value != nullptr && value->is_string() ? value->string_value() : std::string();
  };
  // "http://0.0.0.0:2379[,...]": the scheme and the port of the first.
  std::string scheme = "http", port = "2379";
  if (const std::string listen = text("listen-client-urls"); !listen.empty()) {
    const std::string first = listen.substr(0, listen.find(','));
    if (const size_t colon = first.find("://"); colon != std::string::npos) scheme = first.substr(0, colon);
    if (const size_t colon = first.rfind(':'); colon != std::string::npos && colon > first.find("://") + 2)
      port = first.substr(colon + 1);
  }
  std::vector<std::string> endpoints;
  auto add = [&](const std::string& host) {
    const std::string url = scheme + "://" + host + ":" + port;
    if (std::find(endpoints.begin(), endpoints.end(), url) == endpoints.end()) endpoints.push_back(url);
  };
  std::string own_host;
  std::stringstream members(text("initial-cluster"));
  for (std::string member; std::getline(members, member, ',');) {
    // "<name>=<scheme>://<host>:<port>"
    const size_t host_start = member.find("://");
    if (host_start == std::string::npos) continue;
    const std::string address = member.substr(host_start + 3);
    const std::string host = address.substr(0, address.rfind(':'));
    if (!member_name.empty() && member.substr(0, member.find('=')) == member_name) own_host = host;
    add(host);
  }
  // "<statefulset>-<ordinal>.<peer Service>...": the siblings' hosts differ in the ordinal alone.
  const size_t dash = member_name.rfind('-');
  if (own_host.rfind(member_name + ".", 0) != 0 || dash == std::string::npos ||
      member_name.find_first_not_of("0123456789", dash + 1) != std::string::npos ||
      dash + 1 == member_name.size())
    return endpoints;
  const std::string domain = own_host.substr(member_name.size());
  const int64_t largest = std::min(LargestClusterSize(*config, etcd), kMostEtcdMembers);
  for (int64_t ordinal = 0; ordinal < largest; ++ordinal)
    add(member_name.substr(0, dash + 1) + std::to_string(ordinal) + domain);
  return endpoints;
}

Result<Snapshot> ObserveMemberNow(const MemberObservationSources& sources) {
  auto now = TimestampFromUnixSeconds(std::time(nullptr));
  if (!now.ok()) return now.error();
  return ObserveMember(sources, *now);
}

}  // namespace ruleplane
