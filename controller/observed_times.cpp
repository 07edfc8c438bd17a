#include "controller/observed_times.h"

#include "adapters/kubernetes/kube_client.h"
#include "adapters/kubernetes/object_fields.h"
#include "engine/common/time_util.h"

namespace ruleplane {
namespace {

using std::chrono::system_clock;

// Forgotten when unseen this long (the Lease or its Etcd is gone).
constexpr std::chrono::hours kForgetAfter{1};
// A disruptive step written longer ago than this is as old as written on
// first sight: beyond any clock skew and any interval the gate waits.
constexpr std::chrono::hours kDisruptiveStepTrustedAfter{1};

system_clock::time_point WallTime(Timestamp at) {
  return system_clock::time_point(std::chrono::seconds(at.seconds) + std::chrono::nanoseconds(at.nanos));
}

bool IsMemberLease(const Value& lease, const std::string& etcd_name) {
  const std::string name = FieldText(lease, {"metadata", "name"});
  if (!name.starts_with(etcd_name + "-") || name.size() == etcd_name.size() + 1) return false;
  return name.find_first_not_of("0123456789", etcd_name.size() + 1) == std::string::npos;
}

std::string Key(const Value& object, const std::string& namespace_name, const std::string& what) {
  return namespace_name + "/" + FieldText(object, {"metadata", "name"}) + "/" +
         FieldText(object, {"metadata", "uid"}) + "/" + what;
}

}  // namespace

std::optional<system_clock::time_point> ObservedTimes::SeenAt(
    const std::string& key, const std::string& value, const std::string& written, FirstSight first_sight,
    system_clock::time_point wall_now, std::chrono::steady_clock::time_point steady_now) {
  Seen& seen = seen_[key];
  if (seen.value != value) {
    auto since = steady_now;  // seen written again: written now
    if (seen.value.empty()) {
      auto at = ParseRfc3339(written);
      if (!at.ok()) {
        seen_.erase(key);
        return std::nullopt;  // what reads the field names it
      }
      const auto age = wall_now - WallTime(*at);
      const bool as_written = first_sight == FirstSight::kAsWritten || age > kDisruptiveStepTrustedAfter;
      if (as_written && age > system_clock::duration::zero())
        since -= std::chrono::duration_cast<std::chrono::steady_clock::duration>(age);
    }
    seen = {value, since, steady_now};
  }
  seen.last_use = steady_now;
  return wall_now - std::chrono::duration_cast<system_clock::duration>(steady_now - seen.since);
}

Result<Snapshot> ObservedTimes::Observed(const Snapshot& snapshot,
                                         std::chrono::steady_clock::time_point steady_now) {
  const Value* etcd_object = ValueAt(snapshot.document, {"etcd"});
  if (etcd_object == nullptr) return snapshot;
  const Value& etcd = *etcd_object;
  const std::string etcd_name = FieldText(etcd, {"metadata", "name"});
  const std::string namespace_name = FieldText(etcd, {"metadata", "namespace"});
  const auto wall_now = WallTime(snapshot.observed_at);
  Value document = snapshot.document;
  bool rewritten = false;
  std::lock_guard lock(mutex_);

  Value::List leases = FieldList(document, {"leases"});
  for (Value& lease : leases) {
    const std::string written = FieldText(lease, {"spec", "renewTime"});
    if (written.empty() || !IsMemberLease(lease, etcd_name)) continue;
    auto seen_at = SeenAt(Key(lease, namespace_name, "renewTime"),
                          FieldText(lease, {"spec", "holderIdentity"}) + " " + written, written,
                          FirstSight::kAsWritten, wall_now, steady_now);
    if (!seen_at) continue;
    lease = WithField(
        lease, "spec",
        WithField(*ValueAt(lease, {"spec"}), "renewTime", Value::String(FormatMicroTime(*seen_at))));
    rewritten = true;
  }
  if (rewritten) document = WithField(document, "leases", Value::MakeList(std::move(leases)));

  const Value* operation = ValueAt(etcd, {"status", "lastOperation"});
  const std::string step_time = operation != nullptr ? FieldText(*operation, {"lastDisruptiveStepTime"}) : "";
  if (!step_time.empty()) {
    if (auto seen_at = SeenAt(Key(etcd, namespace_name, "lastDisruptiveStepTime"), step_time, step_time,
                              FirstSight::kRecentIsNow, wall_now, steady_now)) {
      // Whole seconds, as the gate reads them: rounded up, never older than seen.
      const auto seconds = std::chrono::ceil<std::chrono::seconds>(seen_at->time_since_epoch()).count();
      auto at = TimestampFromUnixSeconds(seconds);
      if (!at.ok()) return at.error();
      const Value status =
          WithField(*ValueAt(etcd, {"status"}), "lastOperation",
                    WithField(*operation, "lastDisruptiveStepTime", Value::String(FormatRfc3339(*at))));
      document = WithField(document, "etcd", WithField(etcd, "status", status));
      rewritten = true;
    }
  }
  std::erase_if(seen_, [&](const auto& entry) { return steady_now - entry.second.last_use > kForgetAfter; });
  if (!rewritten) return snapshot;
  return SnapshotFromValue(document);
}

}  // namespace ruleplane
