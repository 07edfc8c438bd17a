#include "adapters/kubernetes/kube_config.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "adapters/base64.h"

namespace ruleplane {
namespace {

namespace fs = std::filesystem;

Error ConfigError(const std::string& path, const std::string& message) {
  return Error{ErrorCode::kInvalidArgument, path + ": " + message, {}};
}

// The entry of `list` (clusters, users, contexts) whose name is `name`.
YAML::Node Named(const YAML::Node& list, const std::string& name) {
  if (list && list.IsSequence()) {
    for (const YAML::Node& entry : list) {
      if (entry["name"] && entry["name"].as<std::string>() == name) return entry;
    }
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

std::string Text(const YAML::Node& map, const char* key) {
  return map && map.IsMap() && map[key] && map[key].IsScalar() ? map[key].as<std::string>() : std::string();
}

// A path in a kubeconfig is relative to the file's directory.
std::string Resolve(const std::string& kubeconfig, const std::string& path) {
  if (path.empty() || fs::path(path).is_absolute()) return path;
  return (fs::path(kubeconfig).parent_path() / path).string();
}

Result<std::string> DecodedData(const std::string& kubeconfig, const std::string& field,
                                const std::string& text) {
  auto decoded = Base64Decode(text);
  if (!decoded) return ConfigError(kubeconfig, field + " is not valid base64");
  return *decoded;
}

}  // namespace

Result<KubeConfig> LoadKubeconfig(const std::string& path, const std::string& context_name) {
  if (!fs::is_regular_file(path)) return Error{ErrorCode::kNotFound, "no kubeconfig at " + path, {}};
  YAML::Node file;
  try {
    file = YAML::LoadFile(path);
  } catch (const YAML::Exception& error) {
    return Error{ErrorCode::kParse, path + ": " + error.what(), {}};
  }
  try {
    const std::string name = context_name.empty() ? Text(file, "current-context") : context_name;
    if (name.empty()) return ConfigError(path, "no current-context, and no --context given");
    const YAML::Node context = Named(file["contexts"], name)["context"];
    if (!context) return ConfigError(path, "no context named '" + name + "'");
    const YAML::Node cluster = Named(file["clusters"], Text(context, "cluster"))["cluster"];
    if (!cluster) return ConfigError(path, "context '" + name + "' names no known cluster");
    const YAML::Node user = Named(file["users"], Text(context, "user"))["user"];

    KubeConfig config;
    config.server = Text(cluster, "server");
    while (!config.server.empty() && config.server.back() == '/') config.server.pop_back();
    if (config.server.empty())
      return ConfigError(path, "cluster '" + Text(context, "cluster") + "' has no server");
    if (Status usable = CheckHttpUrl(config.server); !usable.ok())
      return ConfigError(path,
                         "cluster '" + Text(context, "cluster") + "': server " + usable.error().message);
    if (!Text(context, "namespace").empty()) config.namespace_name = Text(context, "namespace");
    config.tls.ca_file = Resolve(path, Text(cluster, "certificate-authority"));
    if (const std::string data = Text(cluster, "certificate-authority-data"); !data.empty()) {
      auto pem = DecodedData(path, "certificate-authority-data", data);
      if (!pem.ok()) return pem.error();
      config.tls.ca_pem = *pem;
    }
    config.tls.insecure_skip_verify = Text(cluster, "insecure-skip-tls-verify") == "true";
    // As kubectl: a CA that would not be used is a mistake, not a choice.
    if (config.tls.insecure_skip_verify && (!config.tls.ca_file.empty() || !config.tls.ca_pem.empty())) {
      return ConfigError(path,
                         "cluster '" + Text(context, "cluster") +
                             "': insecure-skip-tls-verify with a certificate-authority is not allowed (the "
                             "CA would not be checked)");
    }
    if (user) {
      if (user["exec"] || user["auth-provider"]) {
        return ConfigError(
            path, "user '" + Text(context, "user") +
                      "' authenticates through an exec plugin or auth provider, which ruleplane does "
                      "not run: use a token, a token file or a client certificate");
      }
      config.token = Text(user, "token");
      config.token_file = Resolve(path, Text(user, "tokenFile"));
      config.tls.cert_file = Resolve(path, Text(user, "client-certificate"));
      config.tls.key_file = Resolve(path, Text(user, "client-key"));
      for (auto [field, target] : {std::pair{"client-certificate-data", &config.tls.cert_pem},
                                   std::pair{"client-key-data", &config.tls.key_pem}}) {
        if (const std::string data = Text(user, field); !data.empty()) {
          auto pem = DecodedData(path, field, data);
          if (!pem.ok()) return pem.error();
          *target = *pem;
        }
      }
    }
    return config;
  } catch (const YAML::Exception& error) {
    return Error{ErrorCode::kParse, path + ": " + error.what(), {}};
  }
}

Result<KubeConfig> InClusterConfig(const std::string& secrets_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || port == nullptr || *host == '\0') {
    return Error{
        ErrorCode::kNotFound, "not in a Pod: KUBERNETES_SERVICE_HOST is not set (give --kubeconfig)", {}};
  }
  KubeConfig config;
  const std::string host_text = host;
  config.server = "https://" +
                  (host_text.find(':') != std::string::npos ? "[" + host_text + "]" : host_text) + ":" +
                  std::string(port);
  config.token_file = secrets_dir + "/token";
  config.tls.ca_file = secrets_dir + "/ca.crt";
  std::ifstream in(secrets_dir + "/namespace");
  std::string namespace_name;
  if (in >> namespace_name) config.namespace_name = namespace_name;
  if (!fs::is_regular_file(config.token_file)) {
    return Error{ErrorCode::kNotFound, "no service-account token at " + config.token_file, {}};
  }
  return config;
}

}  // namespace ruleplane
