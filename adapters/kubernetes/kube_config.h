// Where a Kubernetes API server is and how to authenticate to it: from a
// kubeconfig file (clusters, users, contexts; a bearer token or token file,
// a client certificate and key, a CA, as files or as *-data; insecure-skip-
// tls-verify), or in a Pod (the service account's token, CA and namespace).
// Exec plugins and auth providers are not supported: loading a kubeconfig
// whose user needs one fails and says so.
//
//   auto config = LoadKubeconfig("~/.kube/config", "");      // current-context
//   auto config = InClusterConfig();                         // in a Pod
#pragma once

#include <string>

#include "adapters/http_client.h"
#include "engine/common/error.h"

namespace ruleplane {

struct KubeConfig {
  std::string server;  // "https://127.0.0.1:6443", no trailing slash
  TlsConfig tls;
  std::string token;       // a bearer token given inline
  std::string token_file;  // a bearer token read from this file (re-read when it changes: tokens rotate)
  std::string namespace_name = "default";  // the context's namespace; in a Pod, its own
};

// `context` "" = the file's current-context. kNotFound / kParse / kInvalidArgument naming the file and what
// is wrong.
Result<KubeConfig> LoadKubeconfig(const std::string& path, const std::string& context);

// From KUBERNETES_SERVICE_HOST / _PORT and the files under
// /var/run/secrets/kubernetes.io/serviceaccount (or `secrets_dir`).
Result<KubeConfig> InClusterConfig(
    const std::string& secrets_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

}  // namespace ruleplane
