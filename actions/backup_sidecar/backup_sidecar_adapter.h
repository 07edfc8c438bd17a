// BackupSidecarAdapter: the catalogue's `adapter: backup-sidecar` actions,
// through etcd-backup-restore's HTTP API that member-agent serves on each
// member Pod (spec.backup.port, 8080 by default):
//
//   TriggerFullSnapshot  params maxAttempts (default 1): POST /snapshot/full
//                        on the leading member's Pod (any other member
//                        forwards it to the leader); done when the store's
//                        latest full snapshot (GET /snapshot/latest) reaches
//                        the revision the members held when observed (their
//                        Leases' ruleplane.dev/revision). A snapshot that
//                        fails maxAttempts times fails the step for good: a
//                        plan that scales to 0 after it stops there, with the
//                        last backup untouched (etcd-druid's hibernation).
//
// With spec.backup.tls (etcd-druid's layout) the API is HTTPS: the request
// goes to the Pod's IP, and the agent's certificate is verified for the
// Pod's DNS name (<pod>.<etcd>-peer.<namespace>.svc, as the agents forward
// to each other) against the CA of spec.backup.tls.tlsCASecretRef (its
// dataKey, default ca.crt), read from the API server when the step runs.
//
// The Pods, Leases and port come from the snapshot the plan was made from;
// what counts as done is read from the sidecar, now.
#pragma once

#include <chrono>
#include <memory>

#include "actions/adapter.h"
#include "adapters/kubernetes/kube_client.h"
#include "engine/common/snapshot.h"
#include "platform/http_client.h"

namespace ruleplane {

class BackupSidecarAdapter : public Adapter {
 public:
  // `timeout`: per request; a full snapshot is answered when it is uploaded.
  // `kube` reads the CA Secret of an Etcd with spec.backup.tls.
  BackupSidecarAdapter(const Snapshot& snapshot, KubeClient& kube,
                       std::chrono::milliseconds timeout = std::chrono::minutes(5));

  std::string_view kind() const override { return "backup-sidecar"; }
  Result<bool> IsDone(const PlanStep& step, RequestLog& log) override;
  Status Perform(const PlanStep& step, RequestLog& log) override;

 private:
  // The leading member's Pod when a Lease names a leader, else the first Pod
  // with an IP: http://<Pod IP>:<spec.backup.port>, or with TLS
  // https://<Pod DNS name>:<port>, and a client that connects to the IP and
  // verifies against the Etcd's backup CA.
  struct Sidecar {
    std::string url;
    std::unique_ptr<HttpClient> client;
  };
  Result<Sidecar> Connect(RequestLog& log);

  const Value& document_;
  KubeClient& kube_;
  std::chrono::milliseconds timeout_;
};

}  // namespace ruleplane
