// ApplyEtcdMemberAccess: the members' ServiceAccount <etcd>, Role and
// RoleBinding druid.gardener.cloud:etcd:<etcd> (etcd_templates.h), each
// created when missing; a Role whose rules or a RoleBinding whose subjects
// differ from the rendered ones (written by an older ruleplane, or changed
// by hand) gets them, fenced by its resourceVersion. One of those names that
// the Etcd does not own, or a RoleBinding to another role (roleRef cannot be
// changed), is someone else's grant: never taken over or patched.
#include "actions/kubernetes/kubernetes_action_handler.h"
#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/object_fields.h"

namespace ruleplane {
namespace {

constexpr const char* kPatchedFields[] = {"rules", "subjects"};

// Whether `live` is what `rendered` asks for in `field` (true when it asks nothing).
bool Same(const Value& rendered, const Value& live, const char* field) {
  const Value* wanted = ValueAt(rendered, {field});
  return wanted == nullptr || (ValueAt(live, {field}) != nullptr && *ValueAt(live, {field}) == *wanted);
}

bool Current(const Value& rendered, const Value& live) {
  for (const char* field : kPatchedFields) {
    if (!Same(rendered, live, field)) return false;
  }
  return true;
}

Value Patch(const Value& rendered, const Value& /*live*/) {
  Value::Map patch;
  for (const char* field : kPatchedFields) {
    if (const Value* wanted = ValueAt(rendered, {field})) patch.emplace_back(Value::String(field), *wanted);
  }
  return Value::MakeMap(std::move(patch));
}

// Why the live object of `rendered`'s name is not the Etcd's to change; "" when it is.
std::string NotOurs(const Value& rendered, const Value& live, const std::string& etcd_uid) {
  const std::string object = FieldText(rendered, {"kind"}) + " " + FieldText(rendered, {"metadata", "name"});
  if (!OwnedBy(live, etcd_uid)) {
    return "a " + object + " exists that the Etcd does not own (no ownerReference to uid " + etcd_uid +
           "): ruleplane does not take over a grant it did not make; give it that ownerReference to have it "
           "adopted, or move it away";
  }
  if (!Same(rendered, live, "roleRef")) {
    return "the " + object +
           " binds another role than the members' (roleRef cannot be changed): move it away "
           "for the Etcd's own to be created";
  }
  return "";
}

KubernetesActionContext::RenderedRefusal NotOursTo(const KubernetesActionContext& context) {
  const std::string etcd_uid = FieldText(context.observed_etcd(), {"metadata", "uid"});
  return [etcd_uid](const Value& rendered, const Value& live) { return NotOurs(rendered, live, etcd_uid); };
}

Result<bool> IsDone(const PlanStep& /*step*/, KubernetesActionContext& context, RequestLog& log) {
  auto access = EtcdMemberAccess(context.observed_etcd());
  if (!access.ok()) return access.error();
  return context.RenderedCurrent(*access, Current, log, NotOursTo(context));
}

Status Perform(const PlanStep& /*step*/, KubernetesActionContext& context, RequestLog& log) {
  auto access = EtcdMemberAccess(context.observed_etcd());
  if (!access.ok()) return access.error();
  return context.ApplyRendered(*access, Current, Patch, log, NotOursTo(context));
}

}  // namespace

KubernetesActionHandler ApplyEtcdMemberAccessHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = EtcdSpecAsObserved, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
