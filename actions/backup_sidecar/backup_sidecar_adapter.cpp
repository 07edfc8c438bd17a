#include "actions/backup_sidecar/backup_sidecar_adapter.h"

#include <algorithm>

#include "adapters/kubernetes/agent_lease.h"
#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/member_endpoints.h"
#include "adapters/kubernetes/object_fields.h"
#include "adapters/kubernetes/secret_data.h"
#include "engine/common/json_value.h"

namespace ruleplane {
namespace {

// The highest revision a member's agent recorded on its Lease; 0 when none did.
int64_t ObservedRevision(const Value& document) {
  int64_t revision = 0;
  for (const Value& lease : FieldList(document, {"leases"}))
    revision = std::max(revision, RecordedRevision(lease));
  return revision;
}

Status UnknownAction(const PlanStep& step) {
  return Error{ErrorCode::kInvalidArgument, "the backup-sidecar adapter has no action " + step.action, {}};
}

}  // namespace

BackupSidecarAdapter::BackupSidecarAdapter(const Snapshot& snapshot, KubeClient& kube,
                                           std::chrono::milliseconds timeout)
    : document_(snapshot.document), kube_(kube), timeout_(timeout) {}

Result<BackupSidecarAdapter::Sidecar> BackupSidecarAdapter::Connect(RequestLog& log) {
  std::string leader;
  for (const Value& lease : FieldList(document_, {"leases"})) {
    if (FieldText(lease, {"spec", "holderIdentity"}).ends_with(":Leader"))
      leader = FieldText(lease, {"metadata", "name"});
  }
  std::string ip;
  std::string pod_name;
  for (const Value& pod : FieldList(document_, {"pods"})) {
    const std::string pod_ip = FieldText(pod, {"status", "podIP"});
    const std::string name = FieldText(pod, {"metadata", "name"});
    if (!pod_ip.empty() && (ip.empty() || name == leader)) {
      ip = pod_ip;
      pod_name = name;
    }
  }
  if (ip.empty())
    return Error{ErrorCode::kUnavailable, "no member Pod has an IP: no sidecar to ask for a snapshot", {}};
  const std::string port = std::to_string(FieldInt(document_, {"etcd", "spec", "backup", "port"}, 8080));
  const Value* tls = ValueAt(document_, {"etcd", "spec", "backup", "tls"});
  if (tls == nullptr || tls->is_null())
    return Sidecar{"http://" + PodUrlHost(ip) + ":" + port, std::make_unique<HttpClient>()};

  auto ca = ReadSecretKey(kube_, FieldText(document_, {"etcd", "metadata", "namespace"}),
                          FieldText(*tls, {"tlsCASecretRef", "name"}),
                          FieldText(*tls, {"tlsCASecretRef", "dataKey"}, "ca.crt"),
                          "spec.backup.tls.tlsCASecretRef", log);
  if (!ca.ok()) return ca.error();
  TlsConfig verify;
  verify.ca_pem = *ca;
  const Value* etcd = ValueAt(document_, {"etcd"});
  const std::string host = MemberDnsName(etcd != nullptr ? *etcd : Value::Null(), pod_name);
  auto client = std::make_unique<HttpClient>(verify);
  client->set_connect_to({ConnectToPod(host, port, ip)});
  return Sidecar{"https://" + host + ":" + port, std::move(client)};
}

Result<bool> BackupSidecarAdapter::IsDone(const PlanStep& step, RequestLog& log) {
  if (step.action != "TriggerFullSnapshot") return UnknownAction(step).error();
  const int64_t observed = ObservedRevision(document_);
  // Without a recorded revision nothing says a snapshot is recent enough: take one.
  if (observed == 0) return false;
  auto sidecar = Connect(log);
  if (!sidecar.ok()) return sidecar.error();
  const std::string latest_url = sidecar->url + "/snapshot/latest";
  log.Record(Request{Request::Kind::kHttp, "GET", latest_url, {}, "", false});
  auto answer = sidecar->client->Send("GET", latest_url, "", timeout_);
  if (!answer.ok()) return answer.error();
  if (answer->status != 200) return HttpStatusError(answer->status, "GET " + latest_url, answer->body);
  auto latest = ParseJson(answer->body);
  if (!latest.ok())
    return Error{ErrorCode::kUnavailable, "GET " + latest_url + ": " + latest.error().message, {}};
  const Value* full = ValueAt(*latest, {"fullSnapshot"});
  return full != nullptr && !full->is_null() && FieldInt(*full, {"lastRevision"}, 0) >= observed;
}

Status BackupSidecarAdapter::Perform(const PlanStep& step, RequestLog& log) {
  if (step.action != "TriggerFullSnapshot") return UnknownAction(step);
  auto sidecar = Connect(log);
  if (!sidecar.ok()) return sidecar.error();
  const std::string full_url = sidecar->url + "/snapshot/full";
  const Value* attempts_param = step.params.Find("maxAttempts");
  const int64_t attempts = std::max<int64_t>(
      1, attempts_param != nullptr && attempts_param->is_int() ? attempts_param->int_value() : 1);
  std::string failures;
  for (int64_t attempt = 1; attempt <= attempts; ++attempt) {
    if (!log.Record(Request{Request::Kind::kHttp, "POST", full_url, {}, "", true})) return {};
    auto answer = sidecar->client->Send("POST", full_url, "", timeout_);
    // 200: the snapshot taken, or null when nothing was written since the last one.
    if (answer.ok() && answer->status == 200) return {};
    failures += "\n  attempt " + std::to_string(attempt) + ": " +
                (answer.ok() ? HttpStatusError(answer->status, "POST " + full_url, answer->body).message
                             : answer.error().message);
  }
  // Not retryable: the attempts the rule allowed are spent.
  return Error{ErrorCode::kFailedPrecondition,
               "no full snapshot after " + std::to_string(attempts) + " attempt(s):" + failures,
               {}};
}

}  // namespace ruleplane
