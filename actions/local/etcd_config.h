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
#include "engine/common/value.h"

namespace ruleplane {

// The etcd configuration file for `member` from its template: name, data-dir,
// initial-cluster, initial-cluster-state, advertised URLs set (and
// initial-cluster-token, when the member has one), the rest
// (TLS files, listen URLs, quotas) as the template has it; the v3 JSON
// gateway enabled, which ruleplane's etcd adapter needs.
Result<std::string> RenderEtcdConfig(const std::string& template_yaml, const LocalMember& member,
                                     const std::string& initial_cluster,
                                     const std::string& initial_cluster_state);

// The initial-cluster-token of the Etcd `etcd` (an Etcd object): "etcd-cluster-"
// and its metadata.uid; "" when it has none (an Etcd given as a file). etcd
// derives a cluster's ID from the first members' peer URLs and this token, so
// an Etcd deleted and created again under the same name and size bootstraps
// a cluster with another ID, and the backup store tells its snapshots from
// the first one's (BackupStoreListing::KeepCluster). etcd-druid's template
// says "etcd-cluster" for every Etcd. Only a member that bootstraps or
// restores a cluster reads the token: one that joins or restarts on its
// data does not, so a running cluster is not affected.
std::string EtcdClusterToken(const Value& etcd);

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
