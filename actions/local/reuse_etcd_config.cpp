// ReuseEtcdConfig (initialCluster): the configuration of the member's
// previous start, rendered again from the template (ReusedConfig), after the
// volume's safe_guard file. Done when the configuration written is that one.
#include <filesystem>

#include "actions/local/etcd_config.h"
#include "actions/local/local_action_handler.h"
#include "adapters/local/atomic_file.h"

namespace ruleplane {
namespace fs = std::filesystem;
namespace {

// The template rendered again, so that a changed template (peer TLS set on
// the Etcd) reaches a member restarting on its data, with the initial cluster
// and state of its previous start (etcd ignores both beside a WAL).
Result<std::string> ReusedConfig(const PlanStep& step, const LocalMember& member) {
  auto template_text = ReadConfigFile(member.config_template);
  if (!template_text.ok()) return template_text.error();
  if (fs::exists(member.config_out)) {
    try {
      YAML::Node previous = LoadConfigYaml(member.config_out);
      if (previous["initial-cluster"] && previous["initial-cluster-state"]) {
        return RenderEtcdConfig(*template_text, member, previous["initial-cluster"].as<std::string>(),
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
                 "no etcd configuration from a previous start at " + member.config_out,
                 {}};
  }
  return RenderEtcdConfig(*template_text, member, StepParam(step, "initialCluster"), "new");
}

Result<bool> IsDone(const PlanStep& step, LocalActionContext& context, RequestLog& /*log*/) {
  if (!fs::exists(context.member.config_out)) return false;
  auto config = ReusedConfig(step, context.member);
  if (!config.ok()) return config.error();
  auto written = ReadConfigFile(context.member.config_out);
  return written.ok() && *written == *config;
}

Status Perform(const PlanStep& step, LocalActionContext& context, RequestLog& log) {
  auto config = ReusedConfig(step, context.member);
  if (!config.ok()) return config.error();
  if (Status guarded = WriteSafeGuard(context.member, log); !guarded.ok()) return guarded;
  return WriteFileAtomically(context.member.config_out, *config, log);
}

}  // namespace

LocalActionHandler ReuseEtcdConfigHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
