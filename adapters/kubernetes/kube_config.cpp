#include "adapters/kubernetes/kube_config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include <cstdlib>
#include <filesystem>

#include "platform/base64.h"
#include "platform/file_input.h"

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

Result<std::string> ReadKubeFile(const std::string& path, int64_t max_bytes, const std::string& what) {
  auto text = ReadRegularFile(path, max_bytes);
  if (text.ok()) return text;
  if (text.error().code == ErrorCode::kNotFound)
    return Error{ErrorCode::kNotFound, "no " + what + " at " + path, {}};
  return ConfigError(path, what + ": " + text.error().message);
}

Result<KubeConfig> LoadKubeconfig(const std::string& path, const std::string& context_name) {
  auto text = ReadKubeFile(path, kMaxKubeconfigBytes, "the kubeconfig");
  if (!text.ok() && text.error().code == ErrorCode::kNotFound)
    return Error{ErrorCode::kNotFound, "no kubeconfig at " + path, {}};
  if (!text.ok()) return text.error();
  return ParseKubeconfig(*text, path, context_name);
}

Result<KubeConfig> ParseKubeconfig(std::string_view text, const std::string& path,
                                   const std::string& context_name) {
  if (text.size() > kMaxKubeconfigBytes) {
    return ConfigError(path, "the kubeconfig is " + std::to_string(text.size()) +
                                 " bytes, over the bound of " +
                                 FormatBytes(static_cast<int64_t>(kMaxKubeconfigBytes)));
  }
  const size_t nodes = static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return c == ',' || c == ':' || c == '-' || c == '[' || c == '{' || c == '?' || c == '*';
  }));
  if (nodes > kMaxKubeconfigNodes) {
    return ConfigError(path,
                       "the kubeconfig has " + std::to_string(nodes) +
                           " characters that can begin a YAML node (, : - [ { ? *), over the bound of " +
                           std::to_string(kMaxKubeconfigNodes));
  }
  YAML::Node file;
  try {
    file = YAML::Load(std::string(text));
  } catch (const YAML::DeepRecursion& error) {
    return Error{ErrorCode::kParse,
                 path + ": nested deeper than yaml-cpp's bound of 2,000 levels (line " +
                     std::to_string(error.mark.line + 1) + ", column " +
                     std::to_string(error.mark.column + 1) + ")",
                 {}};
  } catch (const YAML::Exception& error) {
    return Error{ErrorCode::kParse, path + ": not YAML: " + error.what(), {}};
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
  // A namespace name is 63 characters at most.
  if (auto text = ReadKubeFile(secrets_dir + "/namespace", 4096, "the namespace file"); text.ok()) {
    const size_t begin = text->find_first_not_of(" \t\r\n");
    const size_t end = text->find_last_not_of(" \t\r\n");
    if (begin != std::string::npos) config.namespace_name = text->substr(begin, end - begin + 1);
  }
  if (!fs::is_regular_file(config.token_file)) {
    return Error{ErrorCode::kNotFound, "no service-account token at " + config.token_file, {}};
  }
  return config;
}

}  // namespace ruleplane
