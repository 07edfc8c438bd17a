// TriggerFullSnapshot (maxAttempts, default 1): POST /snapshot/full on the
// leading member's sidecar (any other member forwards it to the leader);
// done when the store's latest full snapshot (GET /snapshot/latest) reaches
// the revision the members hold now, as they answer (the highest of those
// that answer; none answering is an error, retried). Not the revision their
// agents recorded on their Leases at the last heartbeat: the writes after it
// would not be in the final snapshot of a hibernation. A sidecar that answers
// 429 (a snapshot was taken on request within its
// --snapshot-request-interval) fails the step retryably, spending no
// attempt. A snapshot that fails maxAttempts times fails the step for good:
// a plan that scales to 0 after it stops there, with the last backup
// untouched (etcd-druid's hibernation).
#include <algorithm>

#include "actions/backup_sidecar/backup_sidecar_action_handler.h"
#include "adapters/kubernetes/object_fields.h"
#include "engine/common/json_value.h"

namespace ruleplane {
namespace {

// The highest revision the members answer with now.
Result<int64_t> LiveRevision(EtcdClient& members, RequestLog& log) {
  int64_t revision = 0;
  Error last{ErrorCode::kUnavailable, "no member endpoint is known", {}};
  for (const std::string& endpoint : members.config().endpoints) {
    auto status = members.MemberStatus(endpoint, log);
    if (status.ok()) {
      revision = std::max(revision, status->revision);
    } else {
      last = status.error();
    }
  }
  if (revision == 0)
    return Error{
        last.code,
        "no member answered with its revision, so no snapshot is known to be recent enough: " + last.message,
        {}};
  return revision;
}

Result<bool> IsDone(const PlanStep& /*step*/, BackupSidecarActionContext& context, RequestLog& log) {
  // Members that cannot be reached: nothing says a snapshot is recent enough, take one.
  if (context.members == nullptr) return false;
  auto observed = LiveRevision(*context.members, log);
  if (!observed.ok()) return observed.error();
  auto sidecar = context.Connect(log);
  if (!sidecar.ok()) return sidecar.error();
  const std::string latest_url = sidecar->url + "/snapshot/latest";
  log.Record(Request{Request::Kind::kHttp, "GET", latest_url, {}, "", false});
  auto answer = sidecar->client->Send("GET", latest_url, "", context.timeout);
  if (!answer.ok()) return answer.error();
  if (answer->status != 200) return HttpStatusError(answer->status, "GET " + latest_url, answer->body);
  auto latest = ParseJson(answer->body);
  if (!latest.ok())
    return Error{ErrorCode::kUnavailable, "GET " + latest_url + ": " + latest.error().message, {}};
  const Value* full = ValueAt(*latest, {"fullSnapshot"});
  return full != nullptr && !full->is_null() && FieldInt(*full, {"lastRevision"}, 0) >= *observed;
}

Status Perform(const PlanStep& step, BackupSidecarActionContext& context, RequestLog& log) {
  auto sidecar = context.Connect(log);
  if (!sidecar.ok()) return sidecar.error();
  const std::string full_url = sidecar->url + "/snapshot/full";
  const Value* attempts_param = step.params.Find("maxAttempts");
  const int64_t attempts = std::max<int64_t>(
      1, attempts_param != nullptr && attempts_param->is_int() ? attempts_param->int_value() : 1);
  std::string failures;
  for (int64_t attempt = 1; attempt <= attempts; ++attempt) {
    if (!log.Record(Request{Request::Kind::kHttp, "POST", full_url, {}, "", true})) return {};
    auto answer = sidecar->client->Send("POST", full_url, "", context.timeout);
    // 200: the snapshot taken, or null when nothing was written since the last one.
    if (answer.ok() && answer->status == 200) return {};
    // 429: one was taken on request moments ago; not an attempt that failed,
    // the step is retried (requeued) once the interval has passed.
    if (answer.ok() && answer->status == 429) return HttpStatusError(429, "POST " + full_url, answer->body);
    failures += "\n  attempt " + std::to_string(attempt) + ": " +
                (answer.ok() ? HttpStatusError(answer->status, "POST " + full_url, answer->body).message
                             : answer.error().message);
  }
  // Not retryable: the attempts the rule allowed are spent.
  return Error{ErrorCode::kFailedPrecondition,
               "no full snapshot after " + std::to_string(attempts) + " attempt(s):" + failures,
               {}};
}

}  // namespace

BackupSidecarActionHandler TriggerFullSnapshotHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
