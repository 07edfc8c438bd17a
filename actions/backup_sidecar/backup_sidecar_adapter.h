// BackupSidecarAdapter: the catalogue's `adapter: backup-sidecar` actions,
// through etcd-backup-restore's HTTP API that member-agent serves on each
// member Pod (spec.backup.port, 8080 by default): TriggerFullSnapshot (the
// leading member's POST /snapshot/full).
//
// With spec.backup.tls (etcd-druid's layout) the API is HTTPS: the request
// goes to the Pod's IP, and the agent's certificate is verified for the
// Pod's DNS name (<pod>.<etcd>-peer.<namespace>.svc, as the agents forward
// to each other) against the CA of spec.backup.tls.tlsCASecretRef (its
// dataKey, default ca.crt), read from the API server when the step runs; with
// spec.backup.tls.clientTLSSecretRef, the request presents that Secret's
// certificate, which the agents then ask for.
//
// The Pods, Leases and port come from the snapshot the plan was made from;
// what counts as done is read from the sidecar, now. Each action is one
// handler, in a file of this folder named for it
// (backup_sidecar_action_handler.h).
#pragma once

#include <chrono>
#include <optional>

#include "actions/adapter.h"
#include "actions/backup_sidecar/backup_sidecar_action_context.h"
#include "adapters/kubernetes/kube_client.h"
#include "engine/common/snapshot.h"

namespace ruleplane {

class BackupSidecarAdapter : public Adapter {
 public:
  // `timeout`: per request; a full snapshot is answered when it is uploaded.
  // `kube` reads the CA Secret of an Etcd with spec.backup.tls. `members`
  // (may be null) tells the revision the cluster holds now.
  BackupSidecarAdapter(const Snapshot& snapshot, KubeClient& kube, EtcdClient* members = nullptr,
                       std::chrono::milliseconds timeout = std::chrono::minutes(5));

  std::string_view kind() const override { return "backup-sidecar"; }
  Result<bool> IsDone(const PlanStep& step, RequestLog& log) override;
  Status Perform(const PlanStep& step, RequestLog& log) override;
  std::optional<std::chrono::milliseconds> PollInterval(const PlanStep& step) const override;

 private:
  BackupSidecarActionContext context_;
};

}  // namespace ruleplane
