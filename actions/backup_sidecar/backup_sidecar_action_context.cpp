#include "actions/backup_sidecar/backup_sidecar_action_context.h"

#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/member_endpoints.h"
#include "adapters/kubernetes/object_fields.h"
#include "adapters/kubernetes/secret_data.h"

namespace ruleplane {

namespace {

// Fenced as the Kubernetes client `kube` is (its guard and cancellation).
Sidecar Fenced(std::string base_url, std::unique_ptr<HttpClient> client, const KubeClient& kube) {
  client->set_guard(kube.guard());
  client->set_cancel(kube.cancel());
  return Sidecar{std::move(base_url), std::move(client)};
}

}  // namespace

Result<Sidecar> BackupSidecarActionContext::Connect(RequestLog& log) const {
  std::string leader;
  for (const Value& lease : FieldList(document, {"leases"})) {
    if (FieldText(lease, {"spec", "holderIdentity"}).ends_with(":Leader"))
      leader = FieldText(lease, {"metadata", "name"});
  }
  std::string ip;
  std::string pod_name;
  for (const Value& pod : FieldList(document, {"pods"})) {
    const std::string pod_ip = FieldText(pod, {"status", "podIP"});
    const std::string name = FieldText(pod, {"metadata", "name"});
    if (!pod_ip.empty() && (ip.empty() || name == leader)) {
      ip = pod_ip;
      pod_name = name;
    }
  }
  if (ip.empty())
    return Error{ErrorCode::kUnavailable, "no member Pod has an IP: no sidecar to ask for a snapshot", {}};
  const std::string port = std::to_string(FieldInt(document, {"etcd", "spec", "backup", "port"}, 8080));
  const Value* tls = ValueAt(document, {"etcd", "spec", "backup", "tls"});
  if (tls == nullptr || tls->is_null())
    return Fenced("http://" + PodUrlHost(ip) + ":" + port, std::make_unique<HttpClient>(), kube);

  auto ca = ReadSecretKey(kube, FieldText(document, {"etcd", "metadata", "namespace"}),
                          FieldText(*tls, {"tlsCASecretRef", "name"}),
                          FieldText(*tls, {"tlsCASecretRef", "dataKey"}, "ca.crt"),
                          "spec.backup.tls.tlsCASecretRef", log);
  if (!ca.ok()) return ca.error();
  TlsConfig verify;
  verify.ca_pem = *ca;
  // With a client Secret the agents answer a snapshot request only with its certificate (member_api.h).
  if (const Value* client = ValueAt(*tls, {"clientTLSSecretRef"}); client != nullptr && !client->is_null()) {
    const std::string namespace_name = FieldText(document, {"etcd", "metadata", "namespace"});
    const std::string secret = FieldText(*client, {"name"});
    auto cert =
        ReadSecretKey(kube, namespace_name, secret, "tls.crt", "spec.backup.tls.clientTLSSecretRef", log);
    if (!cert.ok()) return cert.error();
    auto key =
        ReadSecretKey(kube, namespace_name, secret, "tls.key", "spec.backup.tls.clientTLSSecretRef", log);
    if (!key.ok()) return key.error();
    verify.cert_pem = *cert;
    verify.key_pem = *key;
  }
  const Value* etcd = ValueAt(document, {"etcd"});
  const std::string host = MemberDnsName(etcd != nullptr ? *etcd : Value::Null(), pod_name);
  auto client = std::make_unique<HttpClient>(verify);
  client->set_connect_to({ConnectToPod(host, port, ip)});
  return Fenced("https://" + host + ":" + port, std::move(client), kube);
}

}  // namespace ruleplane
