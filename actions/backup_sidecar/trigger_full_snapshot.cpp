// TriggerFullSnapshot (maxAttempts, default 1): POST /snapshot/full on the
// leading member's sidecar (any other member forwards it to the leader);
// done when the store's latest full snapshot (GET /snapshot/latest) reaches
// the revision the members held when observed (their Leases'
// ruleplane.dev/revision). A sidecar that answers 429 (a snapshot was taken on
// request within its --snapshot-request-interval) fails the step retryably,
// spending no attempt. A snapshot that fails maxAttempts times fails the
// step for good: a plan that scales to 0 after it stops there, with the last
// backup untouched (etcd-druid's hibernation).
#include <algorithm>

#include "actions/backup_sidecar/backup_sidecar_action_handler.h"
#include "adapters/kubernetes/agent_lease.h"
#include "adapters/kubernetes/object_fields.h"
#include "engine/common/json_value.h"

namespace ruleplane {
namespace {

// The highest revision a member's agent recorded on its Lease; 0 when none did.
int64_t ObservedRevision(const Value& document) {
  int64_t revision = 0;
  for (const Value& lease : FieldList(document, {"leases"}))
    revision = std::max(revision, RecordedRevision(lease));
  return revision;
}

Result<bool> IsDone(const PlanStep& /*step*/, BackupSidecarActionContext& context, RequestLog& log) {
  const int64_t observed = ObservedRevision(context.document);
  // Without a recorded revision nothing says a snapshot is recent enough: take one.
  if (observed == 0) return false;
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
  return full != nullptr && !full->is_null() && FieldInt(*full, {"lastRevision"}, 0) >= observed;
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
