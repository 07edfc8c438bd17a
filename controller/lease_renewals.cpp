#include "controller/lease_renewals.h"

#include "adapters/kubernetes/kube_client.h"
#include "adapters/kubernetes/object_fields.h"
#include "engine/common/time_util.h"

namespace ruleplane {
namespace {

// Forgotten when unseen this long (the Lease or its Etcd is gone).
constexpr std::chrono::hours kForgetAfter{1};

std::chrono::system_clock::time_point WallTime(Timestamp at) {
  return std::chrono::system_clock::time_point(std::chrono::seconds(at.seconds) +
                                               std::chrono::nanoseconds(at.nanos));
}

bool IsMemberLease(const Value& lease, const std::string& etcd_name) {
  const std::string name = FieldText(lease, {"metadata", "name"});
  if (!name.starts_with(etcd_name + "-") || name.size() == etcd_name.size() + 1) return false;
  return name.find_first_not_of("0123456789", etcd_name.size() + 1) == std::string::npos;
}

}  // namespace

Result<Snapshot> LeaseRenewals::Observed(const Snapshot& snapshot,
                                         std::chrono::steady_clock::time_point steady_now) {
  const std::string etcd_name = FieldText(snapshot.document, {"etcd", "metadata", "name"});
  const std::string namespace_name = FieldText(snapshot.document, {"etcd", "metadata", "namespace"});
  const auto wall_now = WallTime(snapshot.observed_at);
  Value::List leases = FieldList(snapshot.document, {"leases"});
  bool rewritten = false;
  std::lock_guard lock(mutex_);
  for (Value& lease : leases) {
    const std::string written = FieldText(lease, {"spec", "renewTime"});
    if (written.empty() || !IsMemberLease(lease, etcd_name)) continue;
    const std::string renewal = FieldText(lease, {"spec", "holderIdentity"}) + " " + written;
    Seen& seen = seen_[namespace_name + "/" + FieldText(lease, {"metadata", "name"}) + "/" +
                       FieldText(lease, {"metadata", "uid"})];
    if (seen.renewal != renewal) {
      // First seen: as old as written (never newer than now); seen renewed: renewed now.
      auto since = steady_now;
      if (seen.renewal.empty()) {
        auto at = ParseRfc3339(written);
        if (!at.ok()) continue;  // the status rules name the field
        if (WallTime(*at) < wall_now)
          since -= std::chrono::duration_cast<std::chrono::steady_clock::duration>(wall_now - WallTime(*at));
      }
      seen = {renewal, since, steady_now};
    }
    seen.last_use = steady_now;
    const auto age = std::chrono::duration_cast<std::chrono::system_clock::duration>(steady_now - seen.since);
    lease = WithField(
        lease, "spec",
        WithField(*ValueAt(lease, {"spec"}), "renewTime", Value::String(FormatMicroTime(wall_now - age))));
    rewritten = true;
  }
  std::erase_if(seen_, [&](const auto& entry) { return steady_now - entry.second.last_use > kForgetAfter; });
  if (!rewritten) return snapshot;
  return SnapshotFromValue(WithField(snapshot.document, "leases", Value::MakeList(std::move(leases))));
}

}  // namespace ruleplane
