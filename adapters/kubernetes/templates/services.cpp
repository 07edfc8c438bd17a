// The Services <etcd>-client and the headless <etcd>-peer (etcd_templates.h).
#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/object_fields.h"
#include "adapters/kubernetes/templates/template_parts.h"

namespace ruleplane {

std::string MemberDnsName(const Value& etcd, const std::string& pod) {
  return pod + "." + FieldText(etcd, {"metadata", "name"}) + "-peer." +
         FieldText(etcd, {"metadata", "namespace"}) + ".svc";
}

Result<Value::List> EtcdServices(const Value& etcd) {
  const std::string name = FieldText(etcd, {"metadata", "name"});
  if (FieldText(etcd, {"metadata", "uid"}).empty()) return Missing(etcd, "metadata.uid", "is not set");
  const int64_t client_port = FieldInt(etcd, {"spec", "etcd", "clientPort"}, 2379);
  const int64_t peer_port = FieldInt(etcd, {"spec", "etcd", "serverPort"}, 2380);
  const int64_t backup_port = FieldInt(etcd, {"spec", "backup", "port"}, 8080);
  // The client Service carries spec.etcd.clientService's labels and
  // annotations (etcd-druid's clientservice.go getLabels, getAnnotations).
  Json client_metadata = ObjectMeta(etcd, name + "-client");
  Json keys = {{"annotations", Json::array()}, {"labels", Json::array()}};
  for (const char* field : {"labels", "annotations"}) {
    const Value* given = ValueAt(etcd, {"spec", "etcd", "clientService", field});
    if (given == nullptr || !given->is_map()) continue;
    const Json entries = ToJson(*given);
    for (auto entry = entries.begin(); entry != entries.end(); ++entry) {
      client_metadata[field][entry.key()] = entry.value();
      keys[field].push_back(entry.key());
    }
  }
  client_metadata["annotations"][kClientServiceKeysAnnotation] = keys.dump();
  const Json client = {
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata", client_metadata},
      {"spec",
       {{"type", "ClusterIP"},
        {"selector", SelectorLabels(name)},
        // backuprestore: member-agent's API (/snapshot/full), as etcd-druid's client Service names it.
        {"ports",
         Json::array({{{"name", "client"}, {"port", client_port}, {"targetPort", client_port}},
                      {{"name", "backuprestore"}, {"port", backup_port}, {"targetPort", backup_port}}})}}}};
  const Json peer = {
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata", ObjectMeta(etcd, name + "-peer")},
      {"spec",
       {{"clusterIP", "None"},
        {"publishNotReadyAddresses", true},
        {"selector", SelectorLabels(name)},
        {"ports", Json::array({{{"name", "peer"}, {"port", peer_port}, {"targetPort", peer_port}}})}}}};
  Value::List services;
  for (const Json& service : {client, peer}) {
    auto value = ToValue(service);
    if (!value.ok()) return value.error();
    services.push_back(*std::move(value));
  }
  return services;
}

}  // namespace ruleplane
