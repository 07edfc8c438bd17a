#include "adapters/kubernetes/member_endpoints.h"

#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/object_fields.h"
#include "adapters/kubernetes/secret_data.h"

namespace ruleplane {

std::string PodUrlHost(const std::string& pod_ip) {
  return pod_ip.find(':') != std::string::npos ? "[" + pod_ip + "]" : pod_ip;
}

std::string ConnectToPod(const std::string& host, const std::string& port, const std::string& pod_ip) {
  return host + ":" + port + ":" + PodUrlHost(pod_ip) + ":" + port;
}

Result<MemberEndpoints> ResolveMemberEndpoints(const Value& snapshot, KubeClient& kube, RequestLog& log,
                                               std::chrono::milliseconds timeout) {
  const Value* found = ValueAt(snapshot, {"etcd"});
  const Value& etcd = found != nullptr ? *found : Value::Null();
  const std::string namespace_name = FieldText(etcd, {"metadata", "namespace"});
  const Value* tls = ValueAt(etcd, {"spec", "etcd", "clientUrlTls"});
  const std::string port = std::to_string(FieldInt(etcd, {"spec", "etcd", "clientPort"}, 2379));
  MemberEndpoints endpoints;
  endpoints.config.timeout = timeout;
  if (tls != nullptr && !tls->is_null()) {
    auto ca = ReadSecretKey(kube, namespace_name, FieldText(*tls, {"tlsCASecretRef", "name"}),
                            FieldText(*tls, {"tlsCASecretRef", "dataKey"}, "ca.crt"),
                            "spec.etcd.clientUrlTls.tlsCASecretRef", log);
    if (!ca.ok()) return ca.error();
    const std::string client_secret = FieldText(*tls, {"clientTLSSecretRef", "name"});
    const char* client_field = "spec.etcd.clientUrlTls.clientTLSSecretRef";
    auto cert = ReadSecretKey(kube, namespace_name, client_secret, "tls.crt", client_field, log);
    if (!cert.ok()) return cert.error();
    auto key = ReadSecretKey(kube, namespace_name, client_secret, "tls.key", client_field, log);
    if (!key.ok()) return key.error();
    endpoints.config.tls.ca_pem = *ca;
    endpoints.config.tls.cert_pem = *cert;
    endpoints.config.tls.key_pem = *key;
  }
  const std::string scheme = tls != nullptr && !tls->is_null() ? "https" : "http";
  for (const Value& pod : FieldList(snapshot, {"pods"})) {
    MemberEndpoint member;
    member.name = FieldText(pod, {"metadata", "name"});
    const std::string host = MemberDnsName(etcd, member.name);
    member.url = scheme + "://" + host + ":" + port;
    const std::string ip = FieldText(pod, {"status", "podIP"});
    member.reachable = !ip.empty();
    if (member.reachable) {
      endpoints.config.endpoints.push_back(member.url);
      endpoints.config.connect_to.push_back(ConnectToPod(host, port, ip));
    }
    endpoints.members.push_back(std::move(member));
  }
  return endpoints;
}

}  // namespace ruleplane
