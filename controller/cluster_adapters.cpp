#include "controller/cluster_adapters.h"

#include <algorithm>

namespace ruleplane {

bool PlansEtcdSteps(const Plan& plan) {
  return std::any_of(plan.steps.begin(), plan.steps.end(),
                     [](const PlanStep& step) { return step.adapter == "etcd"; });
}

ClusterAdapters::ClusterAdapters(KubeClient& client, const Snapshot& snapshot, const MemberEndpoints* members,
                                 std::vector<std::string> member_init_rules)
    : kubernetes_(client, snapshot, std::move(member_init_rules)), sidecar_(snapshot, client) {
  set_.Add(&kubernetes_);
  set_.Add(&sidecar_);
  if (members != nullptr) {
    members_ = std::make_unique<EtcdClient>(members->config);
    etcd_ = std::make_unique<EtcdAdapter>(*members_);
    set_.Add(etcd_.get());
  }
}

std::vector<std::string> ClusterAdapterKinds() { return {"backup-sidecar", "etcd", "kubernetes"}; }

}  // namespace ruleplane
