#include "actions/local/local_adapter.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>

#include "actions/step_params.h"
#include "adapters/local/atomic_file.h"
#include "adapters/local/data_dir.h"
#include "adapters/local/delta_file.h"
#include "adapters/local/initial_cluster.h"
#include "adapters/local/loopback_etcd.h"
#include "adapters/local/snapshot_file.h"
#include "platform/failure_point.h"
#include "platform/file_input.h"
#include "platform/process.h"

namespace ruleplane {
namespace fs = std::filesystem;
namespace {

Error IoError(std::string message) { return Error{ErrorCode::kIo, std::move(message), {}}; }

// The etcd configuration, its template, the re-bootstrap record: bounded, regular files only.
Result<std::string> ReadWholeFile(const std::string& path) {
  return ReadRegularFile(path, kMaxConfigFileBytes);
}

// YAML::LoadFile would read a FIFO or /dev/zero without end.
YAML::Node LoadYamlFile(const std::string& path) {
  auto text = ReadWholeFile(path);
  if (!text.ok()) throw YAML::Exception(YAML::Mark::null_mark(), text.error().message);
  return YAML::Load(*text);
}

std::string TemplateValue(const std::string& template_path, const std::string& key,
                          const std::string& fallback) {
  try {
    YAML::Node node = LoadYamlFile(template_path);
    if (node[key] && node[key].IsScalar()) return node[key].as<std::string>();
  } catch (const YAML::Exception&) {
  }
  return fallback;
}

// Runs a command that was recorded in `log` (unless it is a dry run); its
// failure names the command and what it printed.
Status RunRecorded(const std::vector<std::string>& argv, std::chrono::milliseconds timeout, RequestLog& log,
                   CommandResult* output = nullptr) {
  Request request{Request::Kind::kCommand, argv[0], "", {argv.begin() + 1, argv.end()}, "", true};
  if (!log.Record(request)) return {};
  auto result = RunCommand(argv, timeout);
  if (!result.ok()) return result.error();
  if (result->exit_code != 0) {
    return IoError(DescribeRequest(request) + " exited with " + std::to_string(result->exit_code) + ": " +
                   result->err.substr(0, 2000));
  }
  if (output != nullptr) *output = std::move(*result);
  return {};
}

Status RemoveDerived(const std::string& path, const std::string& why, RequestLog& log) {
  if (!fs::exists(path)) return {};
  if (!log.Record(Request{Request::Kind::kFile, "remove", path, {}, why, true})) return {};
  std::error_code error;
  fs::remove_all(path, error);
  if (error) return IoError("cannot remove " + path + ": " + error.message());
  return {};
}

Status MakeDirectory(const std::string& path, RequestLog& log) {
  if (fs::is_directory(path)) return {};
  if (!log.Record(Request{Request::Kind::kFile, "mkdir", path, {}, "", true})) return {};
  std::error_code error;
  fs::create_directories(path, error);
  if (error) return IoError("cannot create " + path + ": " + error.message());
  fs::permissions(path, fs::perms::owner_all, error);
  return {};
}

Status Rename(const std::string& from, const std::string& to, RequestLog& log) {
  if (!log.Record(Request{Request::Kind::kFile, "rename", from, {to}, "", true})) return {};
  std::error_code error;
  fs::rename(from, to, error);
  if (error) return IoError("cannot rename " + from + " to " + to + ": " + error.message());
  return {};
}

bool IsEmptyDirectory(const std::string& path) {
  std::error_code error;
  return fs::is_directory(path, error) && fs::is_empty(path, error);
}

}  // namespace

Result<std::string> RenderEtcdConfig(const std::string& template_yaml, const LocalMember& member,
                                     const std::string& initial_cluster,
                                     const std::string& initial_cluster_state) {
  YAML::Node config;
  try {
    config = YAML::Load(template_yaml);
  } catch (const YAML::Exception& error) {
    return Error{ErrorCode::kParse, "the etcd configuration template: " + std::string(error.what()), {}};
  }
  if (!config.IsMap() && !config.IsNull()) {
    return Error{ErrorCode::kParse, "the etcd configuration template is not a YAML map", {}};
  }
  for (const Status& checked :
       {CheckMemberName(member.name), CheckPeerUrl(member.peer_url), CheckInitialCluster(initial_cluster),
        member.client_url.empty() ? Status() : CheckPeerUrl(member.client_url)}) {
    if (!checked.ok())
      return Error{checked.error().code, "the etcd configuration: " + checked.error().message, {}};
  }
  config["name"] = member.name;
  config["data-dir"] = member.data_dir;
  config["initial-cluster"] = initial_cluster;
  config["initial-cluster-state"] = initial_cluster_state;
  config["initial-advertise-peer-urls"] = member.peer_url;
  if (!member.client_url.empty()) config["advertise-client-urls"] = member.client_url;
  // ruleplane talks to etcd through the v3 JSON gateway, and etcd 3.4 started
  // with --config-file serves it only when the file says so (the flag's
  // default of true does not apply to a configuration file).
  config["enable-grpc-gateway"] = true;
  YAML::Emitter out;
  out << config;
  return std::string(out.c_str()) + "\n";
}

LocalAdapter::LocalAdapter(LocalMember member, BackupStore* store, EtcdClient* cluster)
    : member_(std::move(member)), store_(store), cluster_(cluster) {}

Result<std::string> LocalAdapter::InitialClusterFor(const PlanStep& step, RequestLog& log) {
  const std::string from_step = StepParam(step, "initialCluster");
  if (StepParam(step, "initialClusterState") != "existing" || cluster_ == nullptr) return from_step;
  auto members = cluster_->MemberList(log);
  if (!members.ok()) return members.error();
  std::string initial_cluster;
  bool self_listed = false;
  for (const EtcdMember& member : *members) {
    if (member.peer_urls.empty()) continue;
    const bool self = std::find(member.peer_urls.begin(), member.peer_urls.end(), member_.peer_url) !=
                      member.peer_urls.end();
    self_listed = self_listed || self;
    // A member added and not started yet has no name; any unique name does.
    const std::string name = self                  ? member_.name
                             : member.name.empty() ? "member-" + MemberIdHex(member.id)
                                                   : member.name;
    for (const std::string& url : member.peer_urls) {
      initial_cluster += (initial_cluster.empty() ? "" : ",") + name + "=" + url;
    }
  }
  if (!self_listed && !log.dry_run()) {
    return Error{ErrorCode::kFailedPrecondition,
                 member_.name + " (" + member_.peer_url +
                     ") is not a member of the cluster: it cannot join as existing",
                 {}};
  }
  return self_listed ? initial_cluster : from_step;
}

Result<int64_t> LocalAdapter::DataDirRevision() const {
  const std::string db = member_.data_dir + "/member/snap/db";
  if (!fs::exists(db)) return int64_t{0};
  return SnapshotFileRevision(db, member_.command_timeout);
}

Result<bool> LocalAdapter::IsDone(const PlanStep& step, RequestLog& log) {
  const std::string& action = step.action;
  if (action == "GenerateEtcdConfig") {
    if (!fs::exists(member_.config_out)) return false;
    if (const std::string marker = StepParam(step, "rebootstrap"); !marker.empty()) {
      auto recorded = ReadWholeFile(member_.data_dir + "/" + kRebootstrapRecordFile);
      if (!recorded.ok() || *recorded != marker + "\n") return false;
    }
    auto initial_cluster = InitialClusterFor(step, log);
    if (!initial_cluster.ok()) return initial_cluster.error();
    try {
      YAML::Node config = LoadYamlFile(member_.config_out);
      auto text = [&](const char* key) {
        return config[key] ? config[key].as<std::string>() : std::string();
      };
      return text("name") == member_.name && text("data-dir") == member_.data_dir &&
             text("initial-cluster") == *initial_cluster &&
             text("initial-cluster-state") == StepParam(step, "initialClusterState");
    } catch (const YAML::Exception&) {
      return false;
    }
  }
  if (action == "ReuseEtcdConfig") {
    if (!fs::exists(member_.config_out)) return false;
    auto config = ReusedConfig(step);
    if (!config.ok()) return config.error();
    auto written = ReadWholeFile(member_.config_out);
    return written.ok() && *written == *config;
  }
  if (action == "ResetDataDir") return IsEmptyDirectory(member_.data_dir);
  if (action == "AbortInitialization") return false;
  if (action == "RestoreFullSnapshot" || action == "ApplyIncrementalSnapshots" ||
      action == "TakeFullSnapshot") {
    if (store_ == nullptr) return false;
    auto revision = DataDirRevision();
    if (!revision.ok() || *revision == 0) return false;
    auto listing = store_->List();
    if (!listing.ok()) return listing.error();
    if (action == "TakeFullSnapshot") {
      for (const StoredSnapshot& snapshot : listing->snapshots) {
        if (snapshot.kind == "Full" && snapshot.last_revision == *revision) return true;
      }
      return false;
    }
    // A restore is done when the data directory holds the snapshot's revision; replaying deltas when it
    // holds the last delta's. A member that joins an existing cluster never holds it (see Restore...).
    std::string last = StepParam(step, "snapshot");
    if (action == "ApplyIncrementalSnapshots") {
      const Value* names = step.params.Find("snapshots");
      if (names == nullptr || !names->is_list() || names->list_value().empty()) return true;
      last = names->list_value().back().string_value();
    }
    for (const StoredSnapshot& snapshot : listing->snapshots) {
      if (snapshot.name == last) return *revision >= snapshot.last_revision;
    }
    return false;
  }
  return Error{ErrorCode::kInvalidArgument, "the local adapter does not perform " + action, {}};
}

Status LocalAdapter::Perform(const PlanStep& step, RequestLog& log) {
  const std::string& action = step.action;
  if (action == "GenerateEtcdConfig") return GenerateConfig(step, log);
  if (action == "ReuseEtcdConfig") {
    auto config = ReusedConfig(step);
    if (!config.ok()) return config.error();
    if (Status guarded = WriteSafeGuard(log); !guarded.ok()) return guarded;
    return WriteFileAtomically(member_.config_out, *config, log);
  }
  if (action == "ResetDataDir") return ResetDataDir(log);
  if (action == "RestoreFullSnapshot") return RestoreFullSnapshot(step, log);
  if (action == "ApplyIncrementalSnapshots") return ApplyIncrementalSnapshots(step, log);
  if (action == "TakeFullSnapshot") return TakeFullSnapshot(log);
  if (action == "AbortInitialization") {
    return Error{ErrorCode::kFailedPrecondition, "initialization aborted: " + StepParam(step, "reason"), {}};
  }
  return Error{ErrorCode::kInvalidArgument, "the local adapter does not perform " + action, {}};
}

Result<std::string> LocalAdapter::ReusedConfig(const PlanStep& step) const {
  auto template_text = ReadWholeFile(member_.config_template);
  if (!template_text.ok()) return template_text.error();
  if (fs::exists(member_.config_out)) {
    try {
      YAML::Node previous = LoadYamlFile(member_.config_out);
      if (previous["initial-cluster"] && previous["initial-cluster-state"]) {
        return RenderEtcdConfig(*template_text, member_, previous["initial-cluster"].as<std::string>(),
                                previous["initial-cluster-state"].as<std::string>());
      }
    } catch (const YAML::Exception&) {
      // Unreadable: written again from the template, as when there is none.
    }
  }
  // A run killed between a restore and writing the configuration (issue 23,
  // hazard 17): the rules reuse only with valid WAL metadata, which decides
  // the membership (etcd ignores the initial cluster and its state then).
  if (StepParam(step, "initialCluster").empty()) {
    return Error{ErrorCode::kFailedPrecondition,
                 "no etcd configuration from a previous start at " + member_.config_out,
                 {}};
  }
  return RenderEtcdConfig(*template_text, member_, StepParam(step, "initialCluster"), "new");
}

Status LocalAdapter::GenerateConfig(const PlanStep& step, RequestLog& log) {
  auto template_text = ReadWholeFile(member_.config_template);
  if (!template_text.ok()) return template_text.error();
  auto initial_cluster = InitialClusterFor(step, log);
  if (!initial_cluster.ok()) return initial_cluster.error();
  auto config =
      RenderEtcdConfig(*template_text, member_, *initial_cluster, StepParam(step, "initialClusterState"));
  if (!config.ok()) return config.error();
  if (const std::string marker = StepParam(step, "rebootstrap"); !marker.empty()) {
    Status recorded =
        WriteFileAtomically(member_.data_dir + "/" + kRebootstrapRecordFile, marker + "\n", log);
    if (!recorded.ok()) return recorded;
  }
  if (Status guarded = WriteSafeGuard(log); !guarded.ok()) return guarded;
  return WriteFileAtomically(member_.config_out, *config, log);
}

Status LocalAdapter::WriteSafeGuard(RequestLog& log) {
  const std::string path = SafeGuardPath(member_.data_dir);
  std::error_code error;
  if (member_.namespace_name.empty() || fs::exists(path, error)) return {};
  return WriteFileAtomically(path, member_.namespace_name, log);
}

Status LocalAdapter::ResetDataDir(RequestLog& log) {
  std::error_code error;
  if (fs::exists(member_.data_dir, error) && !IsEmptyDirectory(member_.data_dir)) {
    auto moved = MoveAside(member_.data_dir, std::chrono::system_clock::now(), log);
    if (!moved.ok()) return moved.error();
  }
  return MakeDirectory(member_.data_dir, log);
}

Status LocalAdapter::RestoreFullSnapshot(const PlanStep& step, RequestLog& log) {
  if (store_ == nullptr) return Error{ErrorCode::kFailedPrecondition, "no backup store is configured", {}};
  const std::string name = StepParam(step, "snapshot");
  std::string initial_cluster = StepParam(step, "initialCluster");
  // etcdctl restores only as a member of the initial cluster. A member the
  // configuration does not list yet (a scale-up whose ConfigMap still names
  // the old members) joins through AddMember: it restores as itself beside them.
  const std::vector<std::string> listed = InitialClusterNames(initial_cluster);
  if (std::find(listed.begin(), listed.end(), member_.name) == listed.end())
    initial_cluster += (initial_cluster.empty() ? "" : ",") + member_.name + "=" + member_.peer_url;
  if (Status checked = CheckInitialCluster(initial_cluster); !checked.ok()) return checked;
  auto listing = store_->List();
  if (!listing.ok()) return listing.error();
  const StoredSnapshot* snapshot = nullptr;
  for (const StoredSnapshot& candidate : listing->snapshots) {
    if (candidate.name == name) snapshot = &candidate;
  }
  if (snapshot == nullptr) return Error{ErrorCode::kNotFound, "the backup store has no snapshot " + name, {}};

  const std::string work = member_.data_dir + ".restore-tmp";
  if (Status removed = RemoveDerived(work, "a partial restore from an interrupted run", log); !removed.ok()) {
    return removed;
  }
  if (Status made = MakeDirectory(work, log); !made.ok()) return made;
  const std::string db_file = work + "/snapshot.db";
  if (log.Record(
          Request{Request::Kind::kFile, "copy", store_->PathOf(name), {db_file}, "decompressed", true})) {
    if (Status copied = store_->ReadSnapshotToFile(name, db_file); !copied.ok()) return copied;
  }
  const std::string restored = work + "/data";
  if (Status ran =
          RunRecorded({"etcdctl", "snapshot", "restore", db_file, "--name", member_.name, "--data-dir",
                       restored, "--initial-cluster", initial_cluster, "--initial-advertise-peer-urls",
                       member_.peer_url, "--initial-cluster-token",
                       TemplateValue(member_.config_template, "initial-cluster-token", "etcd-cluster")},
                      member_.command_timeout, log);
      !ran.ok()) {
    return ran;
  }
  FailPoint("local:restore-before-rename");
  if (!log.dry_run()) {
    auto revision = SnapshotFileRevision(restored + "/member/snap/db", member_.command_timeout);
    if (!revision.ok()) return revision.error();
    // etcd's first revision is 1; a database no key was ever written to reads 0.
    if (std::max<int64_t>(*revision, 1) != std::max<int64_t>(snapshot->last_revision, 1)) {
      return IoError("the restored database has revision " + std::to_string(*revision) +
                     ", the snapshot's name says " + std::to_string(snapshot->last_revision));
    }
  }
  // etcd 3.4 cannot join an existing cluster from restored data: the restored
  // WAL carries a new cluster ID, and a database without its WAL would have
  // the leader's log applied again on top of it. A member that joins keeps
  // the verified restore beside its data directory and starts empty; the
  // leader sends it the data.
  const bool joins = InitialClusterNames(initial_cluster).size() > 1;
  if (joins) {
    // Named after its own second, and unique: two restores within one second used to collide.
    auto aside = MoveAside(restored, std::chrono::system_clock::now(), log, member_.data_dir + ".restored");
    if (!aside.ok()) return aside.error();
  } else {
    if (Status made = MakeDirectory(member_.data_dir, log); !made.ok()) return made;
    if (!log.dry_run() && !IsEmptyDirectory(member_.data_dir)) {
      return Error{
          ErrorCode::kFailedPrecondition, "the data directory " + member_.data_dir + " is not empty", {}};
    }
    if (Status moved = Rename(restored + "/member", member_.data_dir + "/member", log); !moved.ok())
      return moved;
  }
  return RemoveDerived(work, "the decompressed copy of " + name, log);
}

Status LocalAdapter::ApplyIncrementalSnapshots(const PlanStep& step, RequestLog& log) {
  if (store_ == nullptr) return Error{ErrorCode::kFailedPrecondition, "no backup store is configured", {}};
  std::vector<std::string> names;
  if (const Value* list = step.params.Find("snapshots"); list != nullptr && list->is_list()) {
    for (const Value& item : list->list_value()) names.push_back(item.string_value());
  }
  auto listing = store_->List();
  if (!listing.ok()) return listing.error();

  auto etcd = StartLoopbackEtcd(member_.name, member_.data_dir, member_.data_dir + ".replay.log", log);
  if (!etcd.ok()) return etcd.error();
  int64_t revision = etcd->revision;
  EtcdClient client_api(EtcdClientConfig{{etcd->client_url}, {}, std::chrono::seconds(10)});
  for (const std::string& name : names) {
    const StoredSnapshot* delta = nullptr;
    for (const StoredSnapshot& candidate : listing->snapshots) {
      if (candidate.name == name) delta = &candidate;
    }
    if (delta == nullptr) return Error{ErrorCode::kNotFound, "the backup store has no snapshot " + name, {}};
    if (!log.dry_run() && revision >= delta->last_revision) continue;  // applied before an interruption
    auto bytes = store_->ReadSnapshot(name);
    if (!bytes.ok()) return bytes.error();
    auto events = ParseDelta(*bytes);
    if (!events.ok()) return Error{events.error().code, name + ": " + events.error().message, {}};
    // One transaction per source revision, without leases: a lease that
    // expires during the replay must not drop an event (etcd-backup-restore's
    // applier also puts without leases).
    for (const auto& group : GroupByRevision(*events)) {
      if (!log.dry_run() && group.revision <= revision) continue;
      // Checked before the transaction commits: each source revision is one
      // transaction, so the next must be exactly one above the data's. A gap
      // (a delta missing from the store) would otherwise commit the events
      // at the wrong revision, and every later replay would build on them.
      if (!log.dry_run() && group.revision != revision + 1) {
        return Error{ErrorCode::kFailedPrecondition,
                     name + ": the data is at revision " + std::to_string(revision) +
                         " and the next event is at " + std::to_string(group.revision) +
                         ": a delta is missing; nothing was applied from it",
                     {}};
      }
      auto applied = client_api.Txn(group.events, log);
      if (!applied.ok()) return Error{applied.error().code, name + ": " + applied.error().message, {}};
      if (log.dry_run()) continue;
      revision = *applied;
      if (revision != group.revision) {
        return IoError(name + ": replaying source revision " + std::to_string(group.revision) +
                       " gave revision " + std::to_string(revision));
      }
    }
    if (!log.dry_run() && revision != delta->last_revision) {
      return IoError(name + ": after replay the revision is " + std::to_string(revision) +
                     ", the file's name says " + std::to_string(delta->last_revision));
    }
    FailPoint("local:after-delta-file");
  }
  etcd->process.Stop(std::chrono::seconds(30));
  return {};
}

Status LocalAdapter::TakeFullSnapshot(RequestLog& log) {
  if (store_ == nullptr) return Error{ErrorCode::kFailedPrecondition, "no backup store is configured", {}};
  // etcd is stopped: its database file is the snapshot, and etcd's snapshot
  // stream is that file followed by its SHA-256.
  const std::string db = member_.data_dir + "/member/snap/db";
  const std::string snapshot = member_.data_dir + ".snapshot-tmp";
  if (log.Record(Request{Request::Kind::kFile, "copy", db, {snapshot}, "with a SHA-256 trailer", true})) {
    if (Status written = WriteSnapshotStream(db, snapshot); !written.ok()) return written;
  }
  int64_t revision = 0;
  if (!log.dry_run()) {
    auto read = SnapshotFileRevision(snapshot, member_.command_timeout);
    if (!read.ok()) return read.error();
    revision = *read;
  }
  auto written = store_->WriteFull(snapshot, revision, std::chrono::system_clock::now(), "", log);
  if (!written.ok()) return written.error();
  return RemoveDerived(snapshot, "a copy of the database, now in the backup store", log);
}

}  // namespace ruleplane
