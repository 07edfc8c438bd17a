// The member this process initializes, and where its files are: what
// member-init observes (observers/member_observer.h) and acts on
// (actions/local/).
#pragma once

#include <chrono>
#include <string>

namespace ruleplane {

// In a data directory that an approved re-bootstrap re-created, the marker
// (annotation ruleplane.dev/rebootstrap) it was re-created for: written with
// the configuration that ends the plan, so that one marker re-creates the
// cluster once (GenerateEtcdConfig's `rebootstrap` parameter).
inline constexpr const char* kRebootstrapRecordFile = "ruleplane-rebootstrap";

struct LocalMember {
  std::string name;        // the pod name
  std::string peer_url;    // its advertised peer URL
  std::string client_url;  // its advertised client URL
  std::string data_dir;
  std::string config_template;  // the etcd configuration etcd-druid mounts (YAML)
  std::string config_out;       // where the generated configuration goes
  std::string namespace_name;   // written to the data directory's safe_guard file
  // The initial-cluster-token of a cluster this member bootstraps or restores
  // (EtcdClusterToken); "" keeps the template's.
  std::string cluster_token;
  std::chrono::milliseconds command_timeout{std::chrono::minutes(10)};
};

}  // namespace ruleplane
