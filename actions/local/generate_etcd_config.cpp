// GenerateEtcdConfig (initialCluster, initialClusterState, rebootstrap): the
// etcd configuration rendered from the template (RenderEtcdConfig) and
// written atomically, after the volume's safe_guard file and, for an approved
// re-bootstrap, the marker it was re-created for (kRebootstrapRecordFile).
// Done when the configuration written names this member, its data directory,
// the initial cluster and its state, beside the step's marker.
#include <algorithm>
#include <filesystem>

#include "actions/local/etcd_config.h"
#include "actions/local/local_action_handler.h"
#include "adapters/local/atomic_file.h"

namespace ruleplane {
namespace fs = std::filesystem;
namespace {

// The initial-cluster the step writes. For "new", the step's. For "existing",
// the cluster's members as the member list shows them now (after AddMember):
// etcd 3.4 refuses to join when the count differs ("member count is
// unequal"), which the template's n peers do while the cluster is being
// rebuilt one member at a time.
Result<std::string> InitialClusterFor(const PlanStep& step, LocalActionContext& context, RequestLog& log) {
  const std::string from_step = StepParam(step, "initialCluster");
  if (StepParam(step, "initialClusterState") != "existing" || context.cluster == nullptr) return from_step;
  auto members = context.cluster->MemberList(log);
  if (!members.ok()) return members.error();
  std::string initial_cluster;
  bool self_listed = false;
  for (const EtcdMember& member : *members) {
    if (member.peer_urls.empty()) continue;
    const bool self = std::find(member.peer_urls.begin(), member.peer_urls.end(), context.member.peer_url) !=
                      member.peer_urls.end();
    self_listed = self_listed || self;
    // A member added and not started yet has no name; any unique name does.
    const std::string name = self                  ? context.member.name
                             : member.name.empty() ? "member-" + MemberIdHex(member.id)
                                                   : member.name;
    for (const std::string& url : member.peer_urls) {
      initial_cluster += (initial_cluster.empty() ? "" : ",") + name + "=" + url;
    }
  }
  if (!self_listed && !log.dry_run()) {
    return Error{ErrorCode::kFailedPrecondition,
                 context.member.name + " (" + context.member.peer_url +
                     ") is not a member of the cluster: it cannot join as existing",
                 {}};
  }
  return self_listed ? initial_cluster : from_step;
}

Result<bool> IsDone(const PlanStep& step, LocalActionContext& context, RequestLog& log) {
  const LocalMember& member = context.member;
  if (!fs::exists(member.config_out)) return false;
  if (const std::string marker = StepParam(step, "rebootstrap"); !marker.empty()) {
    auto recorded = ReadConfigFile(member.data_dir + "/" + kRebootstrapRecordFile);
    if (!recorded.ok() || *recorded != marker + "\n") return false;
  }
  auto initial_cluster = InitialClusterFor(step, context, log);
  if (!initial_cluster.ok()) return initial_cluster.error();
  try {
    YAML::Node config = LoadConfigYaml(member.config_out);
    auto text = [&](const char* key) { return config[key] ? config[key].as<std::string>() : std::string(); };
    return text("name") == member.name && text("data-dir") == member.data_dir &&
           text("initial-cluster") == *initial_cluster &&
           text("initial-cluster-state") == StepParam(step, "initialClusterState");
  } catch (const YAML::Exception&) {
    return false;
  }
}

Status Perform(const PlanStep& step, LocalActionContext& context, RequestLog& log) {
  const LocalMember& member = context.member;
  auto template_text = ReadConfigFile(member.config_template);
  if (!template_text.ok()) return template_text.error();
  auto initial_cluster = InitialClusterFor(step, context, log);
  if (!initial_cluster.ok()) return initial_cluster.error();
  auto config =
      RenderEtcdConfig(*template_text, member, *initial_cluster, StepParam(step, "initialClusterState"));
  if (!config.ok()) return config.error();
  if (const std::string marker = StepParam(step, "rebootstrap"); !marker.empty()) {
    Status recorded = WriteFileAtomically(member.data_dir + "/" + kRebootstrapRecordFile, marker + "\n", log);
    if (!recorded.ok()) return recorded;
  }
  if (Status guarded = WriteSafeGuard(member, log); !guarded.ok()) return guarded;
  return WriteFileAtomically(member.config_out, *config, log);
}

}  // namespace

LocalActionHandler GenerateEtcdConfigHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
