// The adapters that carry out an EtcdClusterSnapshot's plans, in the
// controller's reconcile and in `apply`: one place, so that what they run
// with is what the conformance check (cli/process_profiles.h) takes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "actions/backup_sidecar/backup_sidecar_adapter.h"
#include "actions/etcd/etcd_adapter.h"
#include "actions/kubernetes/kubernetes_adapter.h"
#include "adapters/kubernetes/member_endpoints.h"
#include "execution/executor.h"

namespace ruleplane {

// How long the controller waits for a member's answer (a status, a member
// list; a defragmentation 10x): a member that does not answer must not hold
// up the reconcile of every other Etcd.
inline constexpr std::chrono::seconds kMemberCallTimeout{3};

// Whether `plan` has a step that reaches the members: one for the etcd
// adapter, or a TriggerFullSnapshot (done when the store holds the revision
// the members answer with now). Their endpoints are then resolved.
bool PlansMemberCalls(const Plan& plan);

class ClusterAdapters {
 public:
  // `snapshot`: the one the plan was made from (it fences the writes).
  // `members`: how to reach the members (ResolveMemberEndpoints); without
  // them, no etcd adapter (a plan with a step for it is refused), and
  // TriggerFullSnapshot is never taken as done before it is performed.
  // `member_init_rules`: what the StatefulSet gives member-init as --rules.
  ClusterAdapters(KubeClient& client, const Snapshot& snapshot, const MemberEndpoints* members,
                  std::vector<std::string> member_init_rules = {});
  ClusterAdapters(const ClusterAdapters&) = delete;
  ClusterAdapters& operator=(const ClusterAdapters&) = delete;

  const AdapterSet& set() const { return set_; }
  KubernetesAdapter& kubernetes() { return kubernetes_; }

 private:
  KubernetesAdapter kubernetes_;
  std::unique_ptr<EtcdClient> members_;  // before sidecar_, which is given it
  BackupSidecarAdapter sidecar_;
  std::unique_ptr<EtcdAdapter> etcd_;
  AdapterSet set_;
};

// The kinds ClusterAdapters registers (with the members resolved).
std::vector<std::string> ClusterAdapterKinds();

}  // namespace ruleplane
