// The ConfigMap etcd-bootstrap-<uid[:6]> with etcd.conf.yaml (etcd_templates.h).
#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/object_fields.h"
#include "adapters/kubernetes/templates/template_parts.h"

namespace ruleplane {

std::string EtcdConfigMapName(const Value& etcd) {
  return "etcd-bootstrap-" + FieldText(etcd, {"metadata", "uid"}).substr(0, 6);
}

Result<Value> EtcdConfigMap(const Value& etcd, int64_t replicas) {
  const std::string name = FieldText(etcd, {"metadata", "name"});
  const std::string ns = FieldText(etcd, {"metadata", "namespace"});
  const std::string uid = FieldText(etcd, {"metadata", "uid"});
  if (uid.size() < 6) return Missing(etcd, "metadata.uid", "is not set");
  auto quota = QuantityBytes(FieldText(etcd, {"spec", "etcd", "quota"}, "8Gi"));
  if (!quota.ok()) return Missing(etcd, "spec.etcd.quota", quota.error().message);
  const std::string peer = Scheme(etcd, "peerUrlTls"), client = Scheme(etcd, "clientUrlTls");
  const std::string peer_port = std::to_string(FieldInt(etcd, {"spec", "etcd", "serverPort"}, 2380));
  const std::string client_port = std::to_string(FieldInt(etcd, {"spec", "etcd", "clientPort"}, 2379));
  std::string initial_cluster;
  for (int64_t i = 0; i < std::max<int64_t>(replicas, 1); ++i) {
    const std::string member = name + "-" + std::to_string(i);
    initial_cluster +=
        (i == 0 ? "" : ",") + member + "=" + peer + "://" + MemberDnsName(etcd, member) + ":" + peer_port;
  }
  YAML::Emitter yaml;
  yaml << YAML::BeginMap;
  yaml << YAML::Key << "name" << YAML::Value << "etcd-" + uid.substr(0, 6);
  yaml << YAML::Key << "data-dir" << YAML::Value << "/var/etcd/data/new.etcd";
  yaml << YAML::Key << "metrics" << YAML::Value << "basic";
  yaml << YAML::Key << "snapshot-count" << YAML::Value << 75000;
  yaml << YAML::Key << "enable-v2" << YAML::Value << false;
  yaml << YAML::Key << "quota-backend-bytes" << YAML::Value << *quota;
  yaml << YAML::Key << "initial-cluster-token" << YAML::Value << "etcd-cluster";
  yaml << YAML::Key << "initial-cluster-state" << YAML::Value << "new";
  yaml << YAML::Key << "initial-cluster" << YAML::Value << initial_cluster;
  yaml << YAML::Key << "auto-compaction-mode" << YAML::Value
       << FieldText(etcd, {"spec", "sharedConfig", "autoCompactionMode"}, "periodic");
  yaml << YAML::Key << "auto-compaction-retention" << YAML::Value
       << FieldText(etcd, {"spec", "sharedConfig", "autoCompactionRetention"}, "30m");
  yaml << YAML::Key << "listen-peer-urls" << YAML::Value << peer + "://0.0.0.0:" + peer_port;
  yaml << YAML::Key << "listen-client-urls" << YAML::Value << client + "://0.0.0.0:" + client_port;
  // Placeholders "<scheme>@<service>@<namespace>@<port>": each member's own
  // URLs are filled in beside it (ruleplane member-init --peer-url/--client-url).
  yaml << YAML::Key << "initial-advertise-peer-urls" << YAML::Value
       << peer + "@" + name + "-peer@" + ns + "@" + peer_port;
  yaml << YAML::Key << "advertise-client-urls" << YAML::Value
       << client + "@" + name + "-peer@" + ns + "@" + client_port;
  // With client certificates asked for, the kubelet's readiness probe cannot
  // get /health from the client URL; etcd also serves it, over plain HTTP, on
  // the metrics listener (stateful_set.cpp probes it there).
  if (client == "https")
    yaml << YAML::Key << "listen-metrics-urls" << YAML::Value
         << "http://0.0.0.0:" + std::to_string(kEtcdMetricsPort);
  // The Secrets where the StatefulSet mounts them, as etcd-druid writes them
  // (internal/component/configmap/etcdconfig.go, getSchemeAndSecurityConfig).
  struct Side {
    const char* field;
    const char* key;
    const TlsSecretMount& ca;
    const TlsSecretMount& server;
  };
  for (const Side& side : {Side{"clientUrlTls", "client-transport-security", kEtcdCa, kEtcdServerTls},
                           Side{"peerUrlTls", "peer-transport-security", kEtcdPeerCa, kEtcdPeerServerTls}}) {
    const Value* settings = ValueAt(etcd, {"spec", "etcd", side.field});
    if (settings == nullptr) continue;
    yaml << YAML::Key << side.key << YAML::Value << YAML::BeginMap;
    yaml << YAML::Key << "cert-file" << YAML::Value << std::string(side.server.path) + "/tls.crt";
    yaml << YAML::Key << "key-file" << YAML::Value << std::string(side.server.path) + "/tls.key";
    yaml << YAML::Key << "client-cert-auth" << YAML::Value << true;
    yaml << YAML::Key << "trusted-ca-file" << YAML::Value << TlsCaFile(*settings, side.ca);
    yaml << YAML::Key << "auto-tls" << YAML::Value << false;
    yaml << YAML::EndMap;
  }
  yaml << YAML::EndMap;
  return ToValue(Json{{"apiVersion", "v1"},
                      {"kind", "ConfigMap"},
                      {"metadata",
                       {{"name", EtcdConfigMapName(etcd)},
                        {"namespace", ns},
                        {"labels", {{"name", "etcd"}, {"instance", name}}},
                        {"ownerReferences", Json::array({OwnerReference(etcd)})}}},
                      {"data", {{"etcd.conf.yaml", std::string(yaml.c_str()) + "\n"}}}});
}

int64_t InitialClusterSize(const Value& config_map) {
  const std::string text = FieldText(config_map, {"data", "etcd.conf.yaml"});
  try {
    const YAML::Node config = YAML::Load(text);
    if (!config.IsMap() || !config["initial-cluster"]) return -1;
    const std::string members = config["initial-cluster"].as<std::string>();
    if (members.empty()) return -1;
    return 1 + static_cast<int64_t>(std::count(members.begin(), members.end(), ','));
  } catch (const YAML::Exception&) {
    return -1;
  }
}

}  // namespace ruleplane
