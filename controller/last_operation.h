// What the controller keeps on an Etcd object's status after a reconcile, so
// that a restarted or new leader finds it: status.lastOperation (the plan's
// digest and rule sets, its step progress and state, the data-loss bound of a
// quorum-loss recovery, the time of the last disruptive step) and
// status.lastErrors (code, description, observedAt), in the shape etcd-druid
// gives them. Pure: the reconciler writes the patch.
#pragma once

#include "controller/controller_gates.h"
#include "engine/plan/plan.h"
#include "execution/executor.h"

namespace ruleplane {

// lastOperation.state: the plan ran to its end (or had nothing to do).
inline constexpr const char* kOperationSucceeded = "Succeeded";
// It paused before a step that a gate holds back, other than an approval.
inline constexpr const char* kOperationProcessing = "Processing";
// It paused before a quorum-loss recovery that waits for an approval.
inline constexpr const char* kOperationAwaitingApproval = "AwaitingApproval";
// It failed or was refused.
inline constexpr const char* kOperationError = "Error";

// The status fields ({"lastOperation": ..., "lastErrors": [...]}) after
// `report` of `plan` (digest `digest`) on the Etcd `etcd` as observed, or
// null when its status already says the same (times aside): a steady state
// writes nothing. `intent`: what DisruptiveStepIntent wrote during this run
// (null when nothing disruptive began), whose time and step are kept.
// `run_id`: the reconcile's, as lastOperation.runID (etcd-druid's field; the
// controller's log lines of the run carry it too), not compared either.
Value LastOperationStatus(const Value& etcd, const Plan& plan, const std::string& digest,
                          const ExecutionReport& report, const DataLossBound& bound, Timestamp now,
                          const Value& intent = Value(), const std::string& run_id = "");

// The intent, written (fenced) right before a disruptive step acts: a merge
// of lastOperation with state Processing, what is being performed,
// lastDisruptiveStepTime `now` and lastDisruptiveStep (the step's id, action,
// target and plan digest, and when `plan` marks a re-bootstrap, the backup
// revision its MarkRebootstrap names: what an approval of the plan covered).
// The minimum interval between disruptive steps is then kept even when the
// process dies between the step and the status written after the plan.
Value DisruptiveStepIntent(const PlanStep& step, const Plan& plan, const std::string& digest, Timestamp now);

}  // namespace ruleplane
