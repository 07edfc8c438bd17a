// How the controller reaches an Etcd's members: each member Pod by the client
// URL the members advertise (<scheme>://<pod>.<etcd>-peer.<ns>.svc:<client
// port>), connected to the Pod's IP, so that the controller need not resolve
// the cluster's DNS and still verifies each member's certificate for its
// name; with client TLS (spec.etcd.clientUrlTls) as the members ask for it:
// the CA of tlsCASecretRef and the client certificate of clientTLSSecretRef.
#pragma once

#include <string>
#include <vector>

#include "adapters/etcd/etcd_client.h"
#include "adapters/kubernetes/kube_client.h"

namespace ruleplane {

struct MemberEndpoint {
  std::string name;        // the Pod's, the member's
  std::string url;         // its client URL
  bool reachable = false;  // its Pod has an IP
};

struct MemberEndpoints {
  std::vector<MemberEndpoint> members;  // the snapshot's Pods, in its order
  EtcdClientConfig config;              // endpoints: the reachable members' URLs
};

// A Pod's IP as a URL's host: bracketed when it is IPv6.
std::string PodUrlHost(const std::string& pod_ip);

// The connect-to rule (host:port:address:port, curl's form) that reaches
// `host` (a member's DNS name) at the Pod's IP: the certificate is still
// verified for the name.
std::string ConnectToPod(const std::string& host, const std::string& port, const std::string& pod_ip);

// From an EtcdClusterSnapshot document (its etcd and pods). Reads the TLS
// Secrets when the Etcd has client TLS: an error names the Secret, the key
// and the Etcd field.
Result<MemberEndpoints> ResolveMemberEndpoints(const Value& snapshot, KubeClient& kube, RequestLog& log,
                                               std::chrono::milliseconds timeout);

}  // namespace ruleplane
