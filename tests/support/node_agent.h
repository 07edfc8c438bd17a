// NodeAgent: a test's stand-in for the kubelet of one node. It runs real
// processes for the Pods of one namespace against a real API server (with
// kube-controller-manager), so that StatefulSets, Pod deletion and readiness
// behave end to end without container images.
//
//   auto agent = NodeAgent::Start(kube->AdminConfig(), {.root = dir + "/node",
//                                                       .binaries = {{"ruleplane", RuleplaneBinary()}},
//                                                       .ip_prefix = "127.42.17."});
//   (*agent)->PodIP("etcd-0");            // "127.42.17.10"
//   (*agent)->Pid("etcd-0", "etcd");      // 0 when not running
//
// What it does, a subset of the kubelet's:
// - Registers the Node `node_name` (Ready, heartbeat every 10 s) and polls the
//   namespace's Pods every 200 ms; a Pod without spec.nodeName is bound to
//   this node (pods/binding).
// - Each Pod gets its own loopback IP: a StatefulSet Pod `<sts>-<i>` gets
//   ip_prefix + (10 + i), others the next free from ip_prefix + 200 (kept by
//   name for the agent's life).
// - Volumes are host directories under `root`: persistentVolumeClaim
//   pvc/<claim> (kept when the Pod goes), emptyDir pods/<uid>/<volume> (moved
//   aside to pods/<uid>.gone when the Pod goes), configMap and secret
//   configs/<pod name>/<volume>, a file per key written when the Pod starts
//   (items honoured, secrets decoded; the same path for every Pod of the
//   name, as inside a real Pod), hostPath hostpath/<path>; other kinds an
//   empty directory.
// - Processes cannot see mounts, so every argument and env value that is a
//   path under a volumeMount's mountPath (longest wins; "--flag=/path" too)
//   is rewritten to the host directory (+ subPath); so are such paths inside
//   configMap files.
// - Network namespace stand-in: "0.0.0.0" in args, env values and configMap
//   files becomes the Pod's IP, so that Pods listening on every address of
//   their own namespace do not collide on the host's.
// - Cluster DNS stand-in: "<pod>.<service>.<namespace>.svc[.cluster.local]"
//   in args, env values and configMap files becomes that Pod's IP (a name
//   ending in "-<i>" resolves to ip_prefix + (10 + i) before the Pod exists).
// - Service account: unless automountServiceAccountToken is false, a
//   kubeconfig with the account's token Secret (waited for) and the CA, in
//   the Pod's namespace, as KUBECONFIG; HOME is a per-Pod directory.
// - Containers: command + args (no images: command[0]'s basename looked up in
//   `binaries`, else PATH), env value and fieldRef (metadata.name,
//   metadata.namespace, metadata.uid, spec.nodeName, status.podIP), $(VAR)
//   expansion with Kubernetes' rules. Init containers run in order to
//   completion (a failure is retried with backoff), then the containers, each
//   restarted with backoff (1 s doubling to 10 s) when it exits. Output goes
//   to pods/<pod>/<container>.log, appended across restarts.
// - Readiness: readinessProbe httpGet (2xx) or exec (exit 0) every
//   periodSeconds (default 1 s, at most 2 s; initialDelaySeconds and liveness
//   probes are ignored), else ready while running. Pod status (phase, IPs,
//   conditions, container statuses) is merge-patched when it changes.
// - A Pod marked for deletion has its processes stopped (SIGTERM, SIGKILL after
//   its grace period, at most 5 s) and is then deleted with grace period 0; a
//   Pod gone from the API has its processes stopped.
// Every process is stopped by its PID; none outlives the agent.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "adapters/kubernetes/kube_config.h"
#include "engine/common/error.h"

namespace ruleplane::testing {

struct NodeAgentOptions {
  std::string node_name = "node-1";
  std::string namespace_name = "default";
  std::string root;                             // the agent's own directory
  std::map<std::string, std::string> binaries;  // basename of command[0] -> absolute path
  std::string ip_prefix;                        // "127.42.17."; random per test, so tests never collide
};

// A prefix "127.<a>.<b>." with random a and b, for NodeAgentOptions::ip_prefix.
std::string RandomLoopbackPrefix();

class NodeAgent {
 public:
  // `admin` may do anything (binds, patches status, deletes Pods).
  static Result<std::unique_ptr<NodeAgent>> Start(const KubeConfig& admin, NodeAgentOptions options);
  ~NodeAgent();  // stops every process (SIGTERM, then SIGKILL), then its thread

  std::string PodIP(const std::string& pod) const;
  // The host directory behind a Pod's volume; "" when the Pod is unknown.
  std::string VolumeDir(const std::string& pod, const std::string& volume) const;
  int Pid(const std::string& pod, const std::string& container) const;  // 0 when not running

 private:
  class Impl;
  explicit NodeAgent(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ruleplane::testing
