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

#include <cstddef>
#include <string>
#include <string_view>

#include "engine/common/error.h"
#include "platform/http_client.h"

namespace ruleplane {

struct KubeConfig {
  std::string server;  // "https://127.0.0.1:6443", no trailing slash
  TlsConfig tls;
  std::string token;       // a bearer token given inline
  std::string token_file;  // a bearer token read from this file (re-read when it changes: tokens rotate)
  std::string namespace_name = "default";  // the context's namespace; in a Pod, its own
};

// Bounds on a kubeconfig, checked before it is parsed: 2 MiB (a cluster
// with its CA and a user with a client certificate take ~6 KiB, so hundreds
// fit) and 65,536 characters that can begin a YAML node (`,` `:` `-` `[` `{`
// `?` `*`; a kubeconfig of hundreds of contexts has a few thousand), because
// yaml-cpp takes ~400 bytes of memory a node: 2 MiB of "[1,1,1,..." took
// 434 MiB. Nesting: yaml-cpp's own bound, 2,000 levels. Parsing a file at
// these bounds peaks under 64 MiB (44 MiB measured).
inline constexpr size_t kMaxKubeconfigBytes = 2 * 1024 * 1024;
inline constexpr size_t kMaxKubeconfigNodes = 65536;

// `context` "" = the file's current-context. kNotFound / kParse / kInvalidArgument naming the file and what
// is wrong: not a regular file (a FIFO, a device), over kMaxKubeconfigBytes, not YAML (with the line and
// column, and what: nested too deep, ...).
Result<KubeConfig> LoadKubeconfig(const std::string& path, const std::string& context);

// The same from a kubeconfig's text; `path` names it in errors and anchors
// relative paths.
Result<KubeConfig> ParseKubeconfig(std::string_view text, const std::string& path,
                                   const std::string& context);

// A small file the client reads (a kubeconfig, the namespace file), through
// ReadRegularFile (platform/file_input.h: a regular file of at most
// `max_bytes`); kNotFound when absent, else an error naming `what` and the path.
Result<std::string> ReadKubeFile(const std::string& path, int64_t max_bytes, const std::string& what);

// From KUBERNETES_SERVICE_HOST / _PORT and the files under
// /var/run/secrets/kubernetes.io/serviceaccount (or `secrets_dir`).
Result<KubeConfig> InClusterConfig(
    const std::string& secrets_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

}  // namespace ruleplane
