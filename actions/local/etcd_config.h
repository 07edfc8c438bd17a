// The etcd configuration file a member starts with, as the configuration
// actions (GenerateEtcdConfig, ReuseEtcdConfig) write it: rendered from the
// template etcd-druid mounts, read back, and preceded by the volume's
// safe_guard file.
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "adapters/local/local_member.h"
#include "adapters/request.h"
#include "engine/common/error.h"

namespace ruleplane {

// The etcd configuration file for `member` from its template: name, data-dir,
// initial-cluster, initial-cluster-state, advertised URLs set, the rest
// (TLS files, listen URLs, quotas) as the template has it; the v3 JSON
// gateway enabled, which ruleplane's etcd adapter needs.
Result<std::string> RenderEtcdConfig(const std::string& template_yaml, const LocalMember& member,
                                     const std::string& initial_cluster,
                                     const std::string& initial_cluster_state);

// The etcd configuration, its template, the re-bootstrap record: bounded,
// regular files only.
Result<std::string> ReadConfigFile(const std::string& path);

// A configuration file as YAML; YAML::Exception when it cannot be read or
// parsed (YAML::LoadFile would read a FIFO or /dev/zero without end).
YAML::Node LoadConfigYaml(const std::string& path);

// The scalar `key` of the template at `template_path`, or `fallback`.
std::string TemplateValue(const std::string& template_path, const std::string& key,
                          const std::string& fallback);

// The volume's safe_guard file (SafeGuardPath) naming this member's
// namespace, as etcd-backup-restore's initializer writes it, when there is
// none: a volume mounted later into another namespace's Etcd is then refused
// (the rules' wrong-volume decisions). Before the configuration, so that a
// start always leaves it.
Status WriteSafeGuard(const LocalMember& member, RequestLog& log);

}  // namespace ruleplane
