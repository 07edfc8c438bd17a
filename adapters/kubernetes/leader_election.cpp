#include "adapters/kubernetes/leader_election.h"

#include <algorithm>
#include <initializer_list>
#include <string_view>
#include <thread>
#include <utility>

#include "adapters/request.h"
#include "platform/failure_point.h"

namespace ruleplane {
namespace {

using std::chrono::steady_clock;

std::string StringAt(const Value& object, std::initializer_list<std::string_view> keys) {
  const Value* at = ValueAt(object, keys);
  return at != nullptr && at->is_string() ? at->string_value() : "";
}

int64_t IntAt(const Value& object, std::initializer_list<std::string_view> keys) {
  const Value* at = ValueAt(object, keys);
  return at != nullptr && at->is_int() ? at->int_value() : 0;
}

Value Map(std::initializer_list<std::pair<const char*, Value>> entries) {
  Value::Map map;
  for (const auto& [key, value] : entries) map.emplace_back(Value::String(key), value);
  return Value::MakeMap(std::move(map));
}

// The lease duration in whole seconds, rounded up: never shorter than asked.
int64_t DurationSeconds(std::chrono::milliseconds duration) {
  return std::max<int64_t>(1, (duration.count() + 999) / 1000);
}

// Whether a failed round is worth retrying: the API server may come back, a
// token may be rotated in; a forbidden or malformed request will not change.
bool RetryableInRun(ErrorCode code) {
  return IsRetryable(code) || code == ErrorCode::kConflict || code == ErrorCode::kNotFound ||
         code == ErrorCode::kIo;
}

}  // namespace

LeaderElector::LeaderElector(KubeClient& kube, LeaderElectionConfig config)
    : kube_(kube), config_(std::move(config)) {}

std::string LeaderElector::LeaseName() const { return config_.namespace_name + "/" + config_.lease_name; }

Status LeaderElector::Validate() const {
  auto invalid = [&](const std::string& what) -> Status {
    return Error{
        ErrorCode::kInvalidArgument, "leader election on the lease " + LeaseName() + ": " + what, {}};
  };
  if (config_.namespace_name.empty() || config_.lease_name.empty())
    return invalid("the namespace and the lease name are required");
  if (config_.identity.empty()) return invalid("the identity is required");
  if (config_.retry_period <= std::chrono::milliseconds::zero())
    return invalid("retry_period must be positive");
  if (config_.renew_deadline <= config_.retry_period)
    return invalid("renew_deadline must be longer than retry_period");
  if (config_.lease_duration <= config_.renew_deadline)
    return invalid("lease_duration must be longer than renew_deadline");
  return {};
}

LeaderElector::Record LeaderElector::RecordOf(const Value& lease) {
  return Record{StringAt(lease, {"spec", "holderIdentity"}), StringAt(lease, {"spec", "renewTime"}),
                StringAt(lease, {"metadata", "resourceVersion"}),
                IntAt(lease, {"spec", "leaseDurationSeconds"}), IntAt(lease, {"spec", "leaseTransitions"})};
}

void LeaderElector::Observe(const Record& record) {
  const bool changed = !observed_any_ || record.holder != observed_.holder ||
                       record.renew_time != observed_.renew_time ||
                       record.resource_version != observed_.resource_version;
  if (changed) observed_at_ = steady_clock::now();
  observed_ = record;
  observed_any_ = true;
  is_leader_ = record.holder == config_.identity;
}

bool LeaderElector::HoldsLease() const {
  if (!is_leader_) return false;
  const steady_clock::duration since =
      steady_clock::now().time_since_epoch() - steady_clock::duration(renewed_at_.load());
  return since < config_.renew_deadline;
}

Result<bool> LeaderElector::TryAcquireOrRenew(std::chrono::system_clock::time_point now) {
  if (Status valid = Validate(); !valid.ok()) return valid.error();
  // The lease counts from before the write: the others count it from when they see it, after.
  const int64_t started = steady_clock::now().time_since_epoch().count();
  const KubeResource lease{"coordination.k8s.io/v1", "leases", config_.namespace_name, config_.lease_name,
                           ""};
  const std::string now_text = FormatMicroTime(now);
  const int64_t duration_seconds = DurationSeconds(config_.lease_duration);
  RequestLog log;

  auto current = kube_.Get(lease, log);
  if (!current.ok() && current.error().code != ErrorCode::kNotFound) return current.error();
  if (!current.ok()) {
    const Value object = Map({{"apiVersion", Value::String("coordination.k8s.io/v1")},
                              {"kind", Value::String("Lease")},
                              {"metadata", Map({{"name", Value::String(config_.lease_name)},
                                                {"namespace", Value::String(config_.namespace_name)}})},
                              {"spec", Map({{"holderIdentity", Value::String(config_.identity)},
                                            {"leaseDurationSeconds", Value::Int(duration_seconds)},
                                            {"acquireTime", Value::String(now_text)},
                                            {"renewTime", Value::String(now_text)},
                                            {"leaseTransitions", Value::Int(0)}})}});
    auto created = kube_.Create({lease.api_version, lease.plural, lease.namespace_name, "", ""}, object, log);
    if (!created.ok()) {
      // Another candidate created it first (409 AlreadyExists): its round.
      if (created.error().code == ErrorCode::kConflict) return false;
      return created.error();
    }
    Observe(RecordOf(*created));
    renewed_at_ = started;
    return true;
  }

  const Record read = RecordOf(*current);
  Observe(read);
  const bool ours = read.holder == config_.identity;
  if (!ours && !read.holder.empty()) {
    steady_clock::duration declared = config_.lease_duration;
    if (read.duration_seconds > 0) declared = std::chrono::seconds(read.duration_seconds);
    if (steady_clock::now() - observed_at_ <= declared) return false;  // held, and not expired
  }

  Value::Map spec = {{Value::String("holderIdentity"), Value::String(config_.identity)},
                     {Value::String("leaseDurationSeconds"), Value::Int(duration_seconds)},
                     {Value::String("renewTime"), Value::String(now_text)}};
  if (!ours) {
    spec.emplace_back(Value::String("acquireTime"), Value::String(now_text));
    spec.emplace_back(Value::String("leaseTransitions"), Value::Int(read.transitions + 1));
  }
  const Value patch = FencedMergePatch(read.resource_version, "spec", Value::MakeMap(std::move(spec)));
  auto patched = kube_.MergePatch(lease, patch, log);
  if (!patched.ok()) {
    // 409: someone else wrote the Lease since we read it (and won this
    // round); 404: it was deleted meanwhile. Either way, the next round reads
    // it again.
    const ErrorCode code = patched.error().code;
    if (code == ErrorCode::kConflict || code == ErrorCode::kNotFound) return false;
    return patched.error();
  }
  Observe(RecordOf(*patched));
  renewed_at_ = started;
  return true;
}

Status LeaderElector::Release() {
  if (!is_leader_) return {};
  const KubeResource lease{"coordination.k8s.io/v1", "leases", config_.namespace_name, config_.lease_name,
                           ""};
  const std::string now_text = FormatMicroTime(std::chrono::system_clock::now());
  const Value patch = FencedMergePatch(observed_.resource_version, "spec",
                                       Map({{"holderIdentity", Value::String("")},
                                            {"leaseDurationSeconds", Value::Int(1)},
                                            {"acquireTime", Value::String(now_text)},
                                            {"renewTime", Value::String(now_text)}}));
  RequestLog log;
  auto patched = kube_.MergePatch(lease, patch, log);
  is_leader_ = false;
  if (!patched.ok()) {
    if (patched.error().code == ErrorCode::kConflict) {
      return Error{ErrorCode::kConflict,
                   "the lease " + LeaseName() +
                       " changed since it was last renewed; not released: " + patched.error().message,
                   {}};
    }
    return patched.error();
  }
  Observe(RecordOf(*patched));
  return {};
}

Status LeaderElector::Run(const std::function<bool()>& should_stop,
                          const std::function<void(bool leading)>& on_change) {
  if (Status valid = Validate(); !valid.ok()) return valid;
  bool leading = false;
  steady_clock::time_point renewed;  // when the last successful round started
  std::string last_failure;
  auto stop_leading = [&] {
    leading = false;
    is_leader_ = false;
    on_change(false);
  };
  for (;;) {
    if (leading && steady_clock::now() - renewed >= config_.renew_deadline) {
      stop_leading();
      return Error{ErrorCode::kFailedPrecondition,
                   "lost the lease " + LeaseName() + ": not renewed for " +
                       std::to_string(config_.renew_deadline.count()) + " ms" +
                       (last_failure.empty() ? "" : " (last: " + last_failure + ")"),
                   {}};
    }
    if (should_stop()) {
      if (!leading) return {};
      Status released = Release();
      stop_leading();
      return released;
    }

    // The deadline counts from before the write: the others count the lease
    // from when they see it, after the write.
    if (leading) FailPoint("leader-election:renew");  // "=hang": the deadline alone must stop the workers
    const steady_clock::time_point started = steady_clock::now();
    auto round = TryAcquireOrRenew(std::chrono::system_clock::now());
    const steady_clock::time_point finished = steady_clock::now();
    if (round.ok() && *round) {
      renewed = started;
      last_failure.clear();
      if (!leading) {
        leading = true;
        on_change(true);
      }
    } else if (!round.ok()) {
      if (!RetryableInRun(round.error().code)) {
        if (leading) stop_leading();
        return round.error();
      }
      last_failure = round.error().message;
    } else if (leading) {
      last_failure = observed_.holder == config_.identity
                         ? "someone else wrote the Lease first (409)"
                         : "the Lease is held by \"" + observed_.holder + "\"";
    }

    // Until the next round, or until the renew deadline when it comes first.
    steady_clock::time_point wake = finished + config_.retry_period;
    if (leading) wake = std::min(wake, renewed + config_.renew_deadline);
    while (steady_clock::now() < wake && !should_stop()) {
      std::this_thread::sleep_for(
          std::min<steady_clock::duration>(wake - steady_clock::now(), std::chrono::milliseconds(50)));
    }
  }
}

}  // namespace ruleplane
