// The member-agent's process: MemberAgent's heartbeat and, on a thread of its
// own, MemberBackups' leader backups, each once per heartbeat, with clients of
// their own (a client serves one thread), so that neither waits for the
// other. With a server port, it also serves etcd-backup-restore's HTTP API
// and metrics (member_api.h). `ruleplane member-agent` parses its flags into
// MemberAgentLoopOptions and calls RunMemberAgentLoop (or RunMemberAgentOnce
// with --once).
#pragma once

#include <atomic>
#include <optional>
#include <ostream>
#include <string>

#include "adapters/etcd/etcd_client.h"
#include "adapters/kubernetes/kube_config.h"
#include "adapters/object_store/store_config.h"
#include "member/member_agent.h"
#include "platform/http_server.h"

namespace ruleplane {

struct MemberAgentLoopOptions {
  MemberAgentOptions agent;
  EtcdClientConfig etcd;  // the cluster's endpoints and TLS
  KubeConfig kube;
  StoreConfig store;  // provider "" = no backups
  // etcd-backup-restore's --server-port: member_api.h's routes on
  // <server_host>:<server_port>; 0 = none.
  int server_port = 0;
  std::string server_host = "0.0.0.0";
  // etcd-backup-restore's --server-cert/--server-key: the API over HTTPS.
  std::optional<HttpServerTls> server_tls;
  // The CA the leader's agent's certificate is verified against when a
  // snapshot request is forwarded to it ("" = the system's).
  std::string server_ca;
  // The client certificate and key a forwarded request presents, for a
  // leader's agent that asks for one (server_tls->client_ca_file); "" = none.
  std::string server_client_cert, server_client_key;
};

// One heartbeat, then, when the member is healthy, the backup due now.
AgentRound RunMemberAgentOnce(const MemberAgentLoopOptions& options);

// Until `stop` is set (SIGTERM): one JSON line per heartbeat, and one per
// backup round that took, failed or garbage-collected something, to `log`. Setting `stop` also cancels the
// requests in flight, so a snapshot in progress ends (its partial download removed).
void RunMemberAgentLoop(const MemberAgentLoopOptions& options, const std::atomic<bool>& stop,
                        std::ostream& log);

}  // namespace ruleplane
