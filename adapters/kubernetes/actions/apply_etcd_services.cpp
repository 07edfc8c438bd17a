// ApplyEtcdServices: <etcd>-client and <etcd>-peer, each created when missing.
#include "adapters/kubernetes/action_handler.h"
#include "adapters/kubernetes/etcd_templates.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& /*step*/, ActionContext& context, RequestLog& log) {
  for (const char* suffix : {"-client", "-peer"}) {
    auto service =
        context.Exists({"v1", "services", context.namespace_name(), context.etcd_name() + suffix, ""}, log);
    if (!service.ok() || !*service) return service;
  }
  return true;
}

Status Perform(const PlanStep& /*step*/, ActionContext& context, RequestLog& log) {
  auto services = EtcdServices(context.observed_etcd());
  if (!services.ok()) return services.error();
  for (const Value& service : *services) {
    if (Status created =
            context.CreateUnlessPresent({"v1", "services", context.namespace_name(), "", ""}, service, log);
        !created.ok())
      return created;
  }
  return {};
}

}  // namespace

ActionHandler ApplyEtcdServicesHandler() {
  return {.is_done = IsDone, .perform = Perform, .fenced_by_etcd_spec = true, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
