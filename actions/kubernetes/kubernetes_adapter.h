// KubernetesAdapter: the catalogue's `adapter: kubernetes` actions on one
// Etcd object and what it owns, through KubeClient:
//
//   SetEtcdCondition, SetMemberStatus, RemoveStatusMember, SetClusterSize,
//   RemoveEtcdCondition, SetEtcdReady       the Etcd's /status
//   ScaleStatefulSet                        the StatefulSet's /scale
//   DeletePod, WaitForPodsDeleted           member Pods (by the uid observed);
//                                           WaitForPodsDeleted sends nothing and is
//                                           polled (PollInterval), never waited for
//   CreateMemberLease, DeleteMemberLease    member Leases
//   CreateSnapshotLease                     <etcd>-full-snap, <etcd>-delta-snap
//   SetPdbMinAvailable                      the PodDisruptionBudget (created when missing)
//   RaiseAlert, PostponeMaintenance         Events on the Etcd object
//   MarkRebootstrap                         the Etcd's kRebootstrapAnnotation
//
// Fencing: every write carries the resourceVersion the plan was made from
// (the snapshot's objects); after its own successful write the adapter
// carries the version that write returned, so the steps of one plan follow
// each other, and any other writer in between makes the next write fail with
// kConflict (re-observe, re-plan; never a blind retry). A write to another
// object than the Etcd (the StatefulSet, Pods, Leases, the ConfigMap, the
// budget, Services, Jobs) also rests on the Etcd's spec as observed: it reads
// the Etcd first and is kConflict when its uid or generation changed since
// the snapshot. IsDone reads the object fresh and compares: a step that took
// effect (before a crash, or by someone else) is found done.
//
// Each action is one handler, in a file of this folder named for it
// (kubernetes_action_handler.h).
//
//   ApplyStatefulSetSpec   the pod template from the Etcd's spec and the
//                          generation annotation, then
//                          status.observedGeneration (etcd_templates.h)
//   ApplyEtcdConfigMap     etcd-bootstrap-<uid[:6]>, created or updated
//   CreateCompactionJob    <etcd>-compactor (AlreadyExists is done)
//   ApplyEtcdServices      <etcd>-client and <etcd>-peer, each created when missing
//   CreateStatefulSet      <etcd> with its member pod template, annotated with
//                          the Etcd generation it was rendered from; done only
//                          when the one that exists names this plan's
//                          generation: one from an older spec is kConflict
//                          (re-observe: ApplyStatefulSetSpec's to update)
#pragma once

#include <chrono>
#include <string>

#include "actions/adapter.h"
#include "actions/kubernetes/kubernetes_action_context.h"
#include "adapters/kubernetes/kube_client.h"
#include "engine/common/snapshot.h"

namespace ruleplane {

class KubernetesAdapter : public Adapter {
 public:
  // `snapshot`: the EtcdClusterSnapshot the plan was made from (its objects'
  // resourceVersions and uids fence the writes).
  KubernetesAdapter(KubeClient& client, const Snapshot& snapshot,
                    std::vector<std::string> member_init_rules = {});

  std::string_view kind() const override { return "kubernetes"; }
  const std::string& namespace_name() const { return context_.namespace_name(); }
  Result<bool> IsDone(const PlanStep& step, RequestLog& log) override;
  Status Perform(const PlanStep& step, RequestLog& log) override;
  std::optional<std::chrono::milliseconds> PollInterval(const PlanStep& step) const override;

  // A merge patch of the Etcd's /status, fenced by its resourceVersion as
  // observed or as this adapter's own last write left it (so that the plan's
  // later writes follow on from it): a controller's record of what it is
  // about to do.
  Status PatchEtcdStatus(const Value& status_patch, RequestLog& log);

  // KubernetesActionContext::compaction_scope.
  void set_compaction_scope(CompactionScope scope) { context_.set_compaction_scope(std::move(scope)); }

 private:
  KubernetesActionContext context_;
};

}  // namespace ruleplane
