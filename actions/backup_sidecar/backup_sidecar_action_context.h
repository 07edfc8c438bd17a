// BackupSidecarActionContext: what every backup-sidecar action handler
// (backup_sidecar_action_handler.h) is given: the EtcdClusterSnapshot the
// plan was made from (its Pods, Leases and the Etcd's spec.backup), the API
// server (the backup CA Secret), the time a request may take, and how to
// reach the sidecar.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "adapters/etcd/etcd_client.h"
#include "adapters/kubernetes/kube_client.h"
#include "adapters/request.h"
#include "engine/common/error.h"
#include "engine/common/value.h"
#include "platform/http_client.h"

namespace ruleplane {

// A member's sidecar: the URL of its API and a client that reaches it.
struct Sidecar {
  std::string url;
  std::unique_ptr<HttpClient> client;
};

struct BackupSidecarActionContext {
  const Value& document;  // the EtcdClusterSnapshot's document
  KubeClient& kube;
  std::chrono::milliseconds timeout;  // per request; a full snapshot is answered when it is uploaded
  // The members, asked for their revision now; null when they cannot be reached.
  EtcdClient* members = nullptr;

  // The leading member's Pod when a Lease names a leader, else the first Pod
  // with an IP: http://<Pod IP>:<spec.backup.port>, or with TLS
  // https://<Pod DNS name>:<port>, and a client that connects to the IP and
  // verifies against the Etcd's backup CA.
  Result<Sidecar> Connect(RequestLog& log) const;
};

}  // namespace ruleplane
