// The member Pods' ServiceAccount, Role and RoleBinding (etcd_templates.h).
#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/object_fields.h"
#include "adapters/kubernetes/templates/template_parts.h"

namespace ruleplane {

std::string MemberServiceAccountName(const Value& etcd) { return FieldText(etcd, {"metadata", "name"}); }

std::string MemberRoleName(const Value& etcd) {
  return "druid.gardener.cloud:etcd:" + FieldText(etcd, {"metadata", "name"});
}

Result<Value::List> EtcdMemberAccess(const Value& etcd) {
  if (FieldText(etcd, {"metadata", "uid"}).empty()) return Missing(etcd, "metadata.uid", "is not set");
  const std::string role = MemberRoleName(etcd);
  const std::string name = FieldText(etcd, {"metadata", "name"});
  // What member-agent and `ruleplane compact` do with the API: renew the
  // member and snapshot Leases, read the Etcd and write its BackupReady
  // condition, read a surplus member's Pod. etcd-druid's Role also lists,
  // watches and updates StatefulSets, which ruleplane's members never touch.
  // Each rule names its objects: this Etcd's, not the controller's
  // leader-election Lease nor another Etcd's snapshot Leases and status (an
  // approver reads the data-loss bound from them). The members and their
  // Pods by every ordinal an etcd cluster can have, so that a scale needs no
  // new Role.
  Json members = Json::array(), leases = Json::array({name + "-full-snap", name + "-delta-snap"});
  for (int64_t ordinal = 0; ordinal < kMostEtcdMembers; ++ordinal) {
    members.push_back(name + "-" + std::to_string(ordinal));
    leases.push_back(name + "-" + std::to_string(ordinal));
  }
  const Json rules = Json::array(
      {{{"apiGroups", {"coordination.k8s.io"}},
        {"resources", {"leases"}},
        {"resourceNames", leases},
        {"verbs", {"get", "patch"}}},
       {{"apiGroups", {"druid.gardener.cloud"}},
        {"resources", {"etcds"}},
        {"resourceNames", {name}},
        {"verbs", {"get"}}},
       {{"apiGroups", {"druid.gardener.cloud"}},
        {"resources", {"etcds/status"}},
        {"resourceNames", {name}},
        {"verbs", {"patch"}}},
       {{"apiGroups", {""}}, {"resources", {"pods"}}, {"resourceNames", members}, {"verbs", {"get"}}}});
  const Json objects[] = {
      {{"apiVersion", "v1"},
       {"kind", "ServiceAccount"},
       {"metadata", ObjectMeta(etcd, MemberServiceAccountName(etcd))}},
      {{"apiVersion", "rbac.authorization.k8s.io/v1"},
       {"kind", "Role"},
       {"metadata", ObjectMeta(etcd, role)},
       {"rules", rules}},
      {{"apiVersion", "rbac.authorization.k8s.io/v1"},
       {"kind", "RoleBinding"},
       {"metadata", ObjectMeta(etcd, role)},
       {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", role}}},
       {"subjects", Json::array({{{"kind", "ServiceAccount"},
                                  {"name", MemberServiceAccountName(etcd)},
                                  {"namespace", FieldText(etcd, {"metadata", "namespace"})}}})}}};
  Value::List access;
  for (const Json& object : objects) {
    auto value = ToValue(object);
    if (!value.ok()) return value.error();
    access.push_back(*std::move(value));
  }
  return access;
}

}  // namespace ruleplane
