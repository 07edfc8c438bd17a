// The controller's safety gates on top of the rules: what `ruleplane
// controller` checks about a step before it runs, from the observed
// EtcdClusterSnapshot alone (no I/O here).
//
//   - Quorum-loss recovery (the StatefulSet scaled to 0, to re-bootstrap from
//     the backup, while spec.replicas is not 0) waits for an approval: the annotation
//     ruleplane.dev/approve-plan on the Etcd naming the plan's digest bound to
//     the Etcd's uid (ApprovalDigest), unless the controller runs with
//     --auto-recover-quorum-loss.
//     An approval runs the step without --allow-disruptive.
//   - The re-bootstrap marker (MarkRebootstrap) waits until the last
//     disruptive step on the Etcd's status is this rule's scale to 0, approved
//     (its plan digest is the approval) for a backup at most as new as the one
//     the marker names, or the approval names the current plan's digest, or
//     --auto-recover-quorum-loss: a StatefulSet at 0 for another reason never
//     gets the marker, and an older backup than the approved one needs an
//     approval of its own. The controller re-checks it on a fresh observation
//     right before it is written, as a disruptive step.
//   - A membership change (a scale to another non-zero size) waits until
//     every member that stays is Ready in the Etcd's status.members.
//   - A disruptive step waits until `min_disruptive_interval` has passed since
//     the last one, whose time the Etcd's status.lastOperation keeps (so a
//     restarted or new leader keeps to it too).
//   - Once a recovery has completed, its approval and marker are retired
//     (RetiredRecoveryAnnotations): neither approves nor re-creates a later
//     incident whose plan happens to have the same digest.
//
// The bound a waiting recovery shows (DataLossBoundOf) counts a member's
// revision only when etcd's member list, which the controller reads for it
// (EtcdMembership), has that member in that cluster.
//
// A gate that says wait pauses the plan before the step; the next reconcile
// decides again.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "adapters/kubernetes/agent_lease.h"
#include "adapters/kubernetes/etcd_annotations.h"
#include "controller/etcd_membership.h"
#include "engine/common/time_util.h"
#include "engine/common/value.h"
#include "engine/plan/plan.h"
#include "execution/executor.h"

namespace ruleplane {

// What a restore from the newest backup loses: the writes after the backup's
// revision. Known only from below: the highest revision a member agent read
// from its member (kRevisionAnnotation, also written by a member that answers
// without a leader after the quorum loss) misses what was acknowledged after
// that reading.
struct DataLossBound {
  int64_t backup_revision = -1;    // the full or delta snapshot Lease's; -1: unknown
  int64_t observed_revision = -1;  // the highest on a member Lease's annotation; -1: unknown
  std::string observed_member;     // whose Lease had it
  std::string observed_time;       // when its agent read it (kRevisionTimeAnnotation), "" if not said
  // Member Leases whose revision was not recorded by a member of the cluster
  // etcd's member list shows now: "<lease> (<member ID>:<cluster ID>)".
  std::vector<std::string> uncounted;
  // Why the member Leases were not checked against etcd's member list; ""
  // when they were.
  std::string unchecked;

  // At least this many revisions written after the backup are lost (0 when
  // it is current); -1: unknown.
  int64_t revisions() const;
  std::string Describe() const;
  Value ToValue() const;
};

// `membership`: etcd's member list as the controller read it just now; a
// member Lease's revision counts only when the member that recorded it
// (kRevisionMemberAnnotation, or the holderIdentity of an agent that writes
// none) is listed in that cluster. Null: not read, every Lease counts.
DataLossBound DataLossBoundOf(const Value& snapshot, const EtcdMembership* membership = nullptr);

struct ControllerGateOptions {
  bool auto_recover_quorum_loss = false;
  std::chrono::seconds min_disruptive_interval{60};
  // For the data-loss bound a waiting recovery shows (DataLossBoundOf).
  const EtcdMembership* membership = nullptr;
};

// The quorum-loss re-bootstrap: ScaleStatefulSet to 0 replicas while the
// Etcd object `etcd` still wants members. A scale to 0 that its spec.replicas
// asks for is hibernation: the members keep their data, no approval is needed.
bool IsQuorumLossRecovery(const PlanStep& step, const Value& etcd);
// Whether the plan has a step whose gate shows a data-loss bound: a
// quorum-loss recovery or the re-bootstrap marker.
bool ShowsDataLossBound(const Plan& plan, const Value& etcd);

// The digest an approval names and status.lastOperation.planDigest shows: the
// plan's (PlanDigest) bound to the uid of the Etcd object `etcd`, so that an
// approval carried onto a re-created Etcd of the same name (a manifest applied
// again with its annotations) approves none of its plans.
std::string ApprovalDigest(const Plan& plan, const Value& etcd);

GateDecision GateControllerStep(const PlanStep& step, const Value& snapshot, const std::string& plan_digest,
                                Timestamp now, const ControllerGateOptions& options);

// The metadata.annotations merge patch ({name: null}) that removes the
// approval and the re-bootstrap marker from the Etcd object `etcd` once the
// cluster is healthy again (conditions Ready and AllMembersReady True, each of
// spec.replicas members Ready in status.members and their Pods Ready in
// status.readyReplicas); null when it is not, or when neither annotation is
// there.
Value RetiredRecoveryAnnotations(const Value& etcd);

}  // namespace ruleplane
