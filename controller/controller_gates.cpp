#include "controller/controller_gates.h"

#include <algorithm>
#include <charconv>

#include "engine/common/sha256.h"

namespace ruleplane {
namespace {

std::string TextAt(const Value& object, std::initializer_list<std::string_view> keys) {
  const Value* value = ValueAt(object, keys);
  return value != nullptr && value->is_string() ? value->string_value() : "";
}

int64_t Decimal(const std::string& text) {
  int64_t number = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  return error == std::errc() && end == text.data() + text.size() && number >= 0 ? number : -1;
}

const Value::List& ListAt(const Value& object, std::initializer_list<std::string_view> keys) {
  static const Value::List kEmpty;
  const Value* value = ValueAt(object, keys);
  return value != nullptr && value->is_list() ? value->list_value() : kEmpty;
}

int64_t IntParam(const PlanStep& step, std::string_view name) {
  const Value* value = step.params.is_map() ? step.params.Find(name) : nullptr;
  return value != nullptr && value->is_int() ? value->int_value() : -1;
}

// Names of the members that are not Ready among the first `count` of the
// StatefulSet `statefulset` ("" when all are).
std::string NotReadyMembers(const Value& snapshot, const std::string& statefulset, int64_t count) {
  std::string not_ready;
  for (int64_t i = 0; i < count; ++i) {
    const std::string member = statefulset + "-" + std::to_string(i);
    const Value::List& members = ListAt(snapshot, {"etcd", "status", "members"});
    const bool ready = std::any_of(members.begin(), members.end(), [&](const Value& entry) {
      return TextAt(entry, {"name"}) == member && TextAt(entry, {"status"}) == "Ready";
    });
    if (!ready) not_ready += (not_ready.empty() ? "" : ", ") + member;
  }
  return not_ready;
}

}  // namespace

int64_t DataLossBound::revisions() const {
  if (backup_revision < 0 || observed_revision < 0) return -1;
  return std::max<int64_t>(0, observed_revision - backup_revision);
}

std::string DataLossBound::Describe() const {
  std::string checked;
  if (!uncounted.empty()) {
    checked += "; not counted, as no member etcd lists now recorded them: ";
    for (size_t i = 0; i < uncounted.size(); ++i) checked += (i == 0 ? "" : ", ") + uncounted[i];
  }
  if (!unchecked.empty())
    checked += "; the member Leases were not checked against etcd's member list: " + unchecked;
  if (backup_revision < 0) return "no backup revision is known: every write may be lost" + checked;
  if (observed_revision < 0) {
    return "the backup holds revision " + std::to_string(backup_revision) +
           "; no member reported its revision, so the writes after it are not bounded" + checked;
  }
  return "the backup holds revision " + std::to_string(backup_revision) +
         "; the highest revision a member reported is " + std::to_string(observed_revision) + " (" +
         observed_member + (observed_time.empty() ? "" : " at " + observed_time) + "): at least " +
         std::to_string(revisions()) +
         " revisions will be lost, and any write acknowledged after that reading too (a lower bound)" +
         checked;
}

Value DataLossBound::ToValue() const {
  Value::List uncounted_leases;
  for (const std::string& lease : uncounted) uncounted_leases.push_back(Value::String(lease));
  return Value::MakeMap({{Value::String("backupRevision"), Value::Int(backup_revision)},
                         {Value::String("observedRevision"), Value::Int(observed_revision)},
                         {Value::String("observedMember"), Value::String(observed_member)},
                         {Value::String("observedTime"), Value::String(observed_time)},
                         {Value::String("revisions"), Value::Int(revisions())},
                         {Value::String("lowerBound"), Value::Bool(true)},
                         {Value::String("membershipChecked"), Value::Bool(unchecked.empty())},
                         {Value::String("uncountedLeases"), Value::MakeList(std::move(uncounted_leases))},
                         {Value::String("description"), Value::String(Describe())}});
}

DataLossBound DataLossBoundOf(const Value& snapshot, const EtcdMembership* membership) {
  DataLossBound bound;
  if (membership == nullptr) {
    bound.unchecked = "it was not read";
  } else if (!membership->observed()) {
    bound.unchecked = membership->unavailable;
  }
  const std::string etcd = TextAt(snapshot, {"etcd", "metadata", "name"});
  for (const Value& lease : ListAt(snapshot, {"leases"})) {
    const std::string name = TextAt(lease, {"metadata", "name"});
    if (name == etcd + "-full-snap" || name == etcd + "-delta-snap") {
      bound.backup_revision =
          std::max(bound.backup_revision, Decimal(TextAt(lease, {"spec", "holderIdentity"})));
      continue;
    }
    const int64_t revision = RecordedRevision(lease);
    if (revision < 0) continue;
    if (membership != nullptr && membership->observed()) {
      const std::string recorder = RevisionRecorder(lease);
      const size_t colon = recorder.find(':');
      if (colon == std::string::npos ||
          !membership->Lists(recorder.substr(0, colon), recorder.substr(colon + 1))) {
        bound.uncounted.push_back(name + " (" + (recorder.empty() ? "no member named" : recorder) + ")");
        continue;
      }
    }
    if (revision > bound.observed_revision) {
      bound.observed_revision = revision;
      bound.observed_member = name;
      bound.observed_time = TextAt(lease, {"metadata", "annotations", kRevisionTimeAnnotation});
    }
  }
  return bound;
}

bool IsQuorumLossRecovery(const PlanStep& step, const Value& etcd) {
  const Value* desired = ValueAt(etcd, {"spec", "replicas"});
  const bool hibernation = desired != nullptr && desired->is_int() && desired->int_value() == 0;
  return step.action == "ScaleStatefulSet" && IntParam(step, "replicas") == 0 && !hibernation;
}

bool ShowsDataLossBound(const Plan& plan, const Value& etcd) {
  return std::any_of(plan.steps.begin(), plan.steps.end(), [&](const PlanStep& step) {
    return IsQuorumLossRecovery(step, etcd) || step.action == "MarkRebootstrap";
  });
}

std::string ApprovalDigest(const Plan& plan, const Value& etcd) {
  return "sha256:" + Sha256Hex(PlanDigest(plan) + "\netcd uid " + TextAt(etcd, {"metadata", "uid"}));
}

GateDecision GateControllerStep(const PlanStep& step, const Value& snapshot, const std::string& plan_digest,
                                Timestamp now, const ControllerGateOptions& options) {
  GateDecision decision;
  const std::string etcd = TextAt(snapshot, {"etcd", "metadata", "name"});
  const Value* etcd_object = ValueAt(snapshot, {"etcd"});
  if (etcd_object != nullptr && IsQuorumLossRecovery(step, *etcd_object)) {
    const Value* annotations = ValueAt(snapshot, {"etcd", "metadata", "annotations"});
    const Value* approval =
        annotations != nullptr && annotations->is_map() ? annotations->Find(kApprovePlanAnnotation) : nullptr;
    if (options.auto_recover_quorum_loss ||
        (approval != nullptr && approval->is_string() && approval->string_value() == plan_digest)) {
      decision.allows_disruptive = true;
    } else {
      decision.wait = true;
      decision.reason = "quorum-loss recovery (re-bootstrap from the backup) waits for approval: " +
                        DataLossBoundOf(snapshot, options.membership).Describe() +
                        "; approve with kubectl annotate etcd " + etcd + " " + kApprovePlanAnnotation + "=" +
                        plan_digest;
      return decision;
    }
  } else if (step.action == "MarkRebootstrap") {
    // The marker makes ordinal 0 re-create the cluster from the backup: only
    // after this very decision's approved scale to 0, as the status recorded
    // it before the scale acted (not after a hibernation or a hand-made
    // scale), and only from the backup that approval covered or a newer one
    // (a member's final snapshot as it stopped loses less). A plan that now
    // names an older backup needs an approval of its own: the current plan's
    // digest.
    const Value* scaled = ValueAt(snapshot, {"etcd", "status", "lastOperation", "lastDisruptiveStep"});
    const std::string scaled_by = scaled != nullptr ? TextAt(*scaled, {"id"}) : "";
    const std::string approval =
        TextAt(snapshot, {"etcd", "metadata", "annotations", kApprovePlanAnnotation});
    const bool this_decision =
        scaled != nullptr && TextAt(*scaled, {"action"}) == "ScaleStatefulSet" &&
        scaled_by.substr(0, scaled_by.rfind('/')) == step.id.substr(0, step.id.rfind('/'));
    const Value* approved_backup = scaled != nullptr ? ValueAt(*scaled, {"backupRevision"}) : nullptr;
    const bool backup_covered = approved_backup != nullptr && approved_backup->is_int() &&
                                IntParam(step, "backupRevision") >= approved_backup->int_value();
    const bool approved =
        options.auto_recover_quorum_loss ||
        (!approval.empty() &&
         ((backup_covered && approval == TextAt(*scaled, {"planDigest"})) || approval == plan_digest));
    if (!this_decision || !approved) {
      decision.wait = true;
      decision.reason =
          "the re-bootstrap marker waits for an approved scale to 0 of this decision (the last "
          "disruptive step on the status is " +
          (scaled_by.empty() ? std::string("none") : scaled_by) + ")";
      if (this_decision) {
        decision.reason =
            "the re-bootstrap marker waits for an approval of the backup it names (revision " +
            std::to_string(IntParam(step, "backupRevision")) +
            (backup_covered ? "" : ", older than the approved scale's or not recorded with it") +
            "): " + DataLossBoundOf(snapshot, options.membership).Describe() +
            "; approve with kubectl annotate etcd " + etcd + " " + kApprovePlanAnnotation + "=" +
            plan_digest + " --overwrite";
      }
      return decision;
    }
  } else if (step.action == "ScaleStatefulSet") {
    const Value* current = ValueAt(snapshot, {"statefulSet", "spec", "replicas"});
    const int64_t staying = std::min(IntParam(step, "replicas"),
                                     current != nullptr && current->is_int() ? current->int_value() : 0);
    const std::string not_ready = NotReadyMembers(snapshot, step.target, staying);
    if (!not_ready.empty()) {
      decision.wait = true;
      decision.reason =
          "a membership change waits until every other member is Ready (not Ready: " + not_ready + ")";
      return decision;
    }
  }
  const std::string last_text =
      TextAt(snapshot, {"etcd", "status", "lastOperation", "lastDisruptiveStepTime"});
  if (step.disruptive && options.min_disruptive_interval.count() > 0 && !last_text.empty()) {
    auto last = ParseRfc3339(last_text);
    if (!last.ok()) {
      decision.wait = true;
      decision.reason = "the last disruptive step's time on the status, \"" + last_text +
                        "\", is not an RFC 3339 time: " + last.error().message;
    } else if (now.seconds - last->seconds < options.min_disruptive_interval.count()) {
      decision.wait = true;
      decision.reason = "the last disruptive step was at " + FormatRfc3339(*last) + "; the next not before " +
                        std::to_string(options.min_disruptive_interval.count()) + " s after it";
    }
  }
  return decision;
}

Value RetiredRecoveryAnnotations(const Value& etcd) {
  Value::Map removed;
  for (const char* annotation : {kApprovePlanAnnotation, kRebootstrapAnnotation}) {
    if (ValueAt(etcd, {"metadata", "annotations", annotation}) != nullptr)
      removed.emplace_back(Value::String(annotation), Value::Null());
  }
  if (removed.empty()) return Value();
  for (const char* condition : {"Ready", "AllMembersReady"}) {
    const Value::List& conditions = ListAt(etcd, {"status", "conditions"});
    const bool holds = std::any_of(conditions.begin(), conditions.end(), [&](const Value& entry) {
      return TextAt(entry, {"type"}) == condition && TextAt(entry, {"status"}) == "True";
    });
    if (!holds) return Value();
  }
  const Value* desired = ValueAt(etcd, {"spec", "replicas"});
  const Value::List& members = ListAt(etcd, {"status", "members"});
  const auto ready = std::count_if(members.begin(), members.end(),
                                   [](const Value& member) { return TextAt(member, {"status"}) == "Ready"; });
  if (desired == nullptr || !desired->is_int() || desired->int_value() <= 0 || ready != desired->int_value())
    return Value();
  // Right after the recovery's scale to 0 the members' Leases have not
  // expired yet and, with no Pod left to be unready, the status rules still
  // call them Ready: only Pods that are Ready again (the StatefulSet's
  // readyReplicas, as the status reports it) end the incident.
  const Value* pods_ready = ValueAt(etcd, {"status", "readyReplicas"});
  if (pods_ready == nullptr || !pods_ready->is_int() || pods_ready->int_value() != desired->int_value())
    return Value();
  return Value::MakeMap(std::move(removed));
}

}  // namespace ruleplane
