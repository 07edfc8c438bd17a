#include "actions/local/etcd_config.h"

#include <filesystem>

#include "adapters/local/atomic_file.h"
#include "adapters/local/data_dir.h"
#include "adapters/local/initial_cluster.h"
#include "platform/file_input.h"

namespace ruleplane {
namespace fs = std::filesystem;

Result<std::string> RenderEtcdConfig(const std::string& template_yaml, const LocalMember& member,
                                     const std::string& initial_cluster,
                                     const std::string& initial_cluster_state) {
  YAML::Node config;
  try {
    config = YAML::Load(template_yaml);
  } catch (const YAML::Exception& error) {
    return Error{ErrorCode::kParse, "the etcd configuration template: " + std::string(error.what()), {}};
  }
  if (!config.IsMap() && !config.IsNull()) {
    return Error{ErrorCode::kParse, "the etcd configuration template is not a YAML map", {}};
  }
  for (const Status& checked :
       {CheckMemberName(member.name), CheckPeerUrl(member.peer_url), CheckInitialCluster(initial_cluster),
        member.client_url.empty() ? Status() : CheckPeerUrl(member.client_url)}) {
    if (!checked.ok())
      return Error{checked.error().code, "the etcd configuration: " + checked.error().message, {}};
  }
  config["name"] = member.name;
  config["data-dir"] = member.data_dir;
  config["initial-cluster"] = initial_cluster;
  config["initial-cluster-state"] = initial_cluster_state;
  config["initial-advertise-peer-urls"] = member.peer_url;
  if (!member.cluster_token.empty()) config["initial-cluster-token"] = member.cluster_token;
  if (!member.client_url.empty()) config["advertise-client-urls"] = member.client_url;
  // ruleplane talks to etcd through the v3 JSON gateway, and etcd 3.4 started
  // with --config-file serves it only when the file says so (the flag's
  // default of true does not apply to a configuration file).
  config["enable-grpc-gateway"] = true;
  YAML::Emitter out;
  out << config;
  return std::string(out.c_str()) + "\n";
}

std::string EtcdClusterToken(const Value& etcd) {
  const Value* uid = etcd.FindPath({"metadata", "uid"});
  return uid != nullptr && uid->is_string() && !uid->string_value().empty()
             ? "etcd-cluster-" + uid->string_value()
             : "";
}

Result<std::string> ReadConfigFile(const std::string& path) {
  return ReadRegularFile(path, kMaxConfigFileBytes);
}

YAML::Node LoadConfigYaml(const std::string& path) {
  auto text = ReadConfigFile(path);
  if (!text.ok()) throw YAML::Exception(YAML::Mark::null_mark(), text.error().message);
  return YAML::Load(*text);
}

std::string TemplateValue(const std::string& template_path, const std::string& key,
                          const std::string& fallback) {
  try {
    YAML::Node node = LoadConfigYaml(template_path);
    if (node[key] && node[key].IsScalar()) return node[key].as<std::string>();
  } catch (const YAML::Exception&) {
  }
  return fallback;
}

Status WriteSafeGuard(const LocalMember& member, RequestLog& log) {
  const std::string path = SafeGuardPath(member.data_dir);
  std::error_code error;
  if (member.namespace_name.empty() || fs::exists(path, error)) return {};
  return WriteFileAtomically(path, member.namespace_name, log);
}

}  // namespace ruleplane
