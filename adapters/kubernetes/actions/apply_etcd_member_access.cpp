// ApplyEtcdMemberAccess: the members' ServiceAccount <etcd>, Role and
// RoleBinding druid.gardener.cloud:etcd:<etcd> (etcd_templates.h), each
// created when missing; a Role whose rules differ from the rendered ones
// (written by an older ruleplane) gets them, fenced by its resourceVersion.
#include <optional>

#include "adapters/kubernetes/action_handler.h"
#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/manifests.h"
#include "adapters/kubernetes/object_fields.h"

namespace ruleplane {
namespace {

// Whether `live` is what `rendered` asks for: it exists, and a Role has its rules.
bool Current(const Value& rendered, const std::optional<Value>& live) {
  if (!live) return false;
  const Value* rules = ValueAt(rendered, {"rules"});
  return rules == nullptr || (ValueAt(*live, {"rules"}) != nullptr && *ValueAt(*live, {"rules"}) == *rules);
}

Result<std::optional<Value>> Live(const Value& rendered, ActionContext& context, RequestLog& log) {
  auto resource = ResourceOf(rendered, context.namespace_name());
  if (!resource.ok()) return resource.error();
  return context.Find(*resource, log);
}

Result<bool> IsDone(const PlanStep& /*step*/, ActionContext& context, RequestLog& log) {
  auto access = EtcdMemberAccess(context.observed_etcd());
  if (!access.ok()) return access.error();
  for (const Value& rendered : *access) {
    auto live = Live(rendered, context, log);
    if (!live.ok()) return live.error();
    if (!Current(rendered, *live)) return false;
  }
  return true;
}

Status Perform(const PlanStep& /*step*/, ActionContext& context, RequestLog& log) {
  auto access = EtcdMemberAccess(context.observed_etcd());
  if (!access.ok()) return access.error();
  for (const Value& rendered : *access) {
    auto live = Live(rendered, context, log);
    if (!live.ok()) return live.error();
    if (Current(rendered, *live)) continue;
    auto resource = ResourceOf(rendered, context.namespace_name());
    if (!resource.ok()) return resource.error();
    if (!*live) {
      KubeResource collection = *resource;
      collection.name.clear();
      if (Status created = context.CreateUnlessPresent(collection, rendered, log); !created.ok())
        return created;
      continue;
    }
    auto patched =
        context.client().MergePatch(*resource,
                                    FencedMergePatch(FieldText(**live, {"metadata", "resourceVersion"}),
                                                     "rules", *ValueAt(rendered, {"rules"})),
                                    log);
    if (!patched.ok()) return patched.error();
  }
  return {};
}

}  // namespace

ActionHandler ApplyEtcdMemberAccessHandler() {
  return {.is_done = IsDone, .perform = Perform, .fenced_by_etcd_spec = true, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
