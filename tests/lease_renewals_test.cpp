// LeaseRenewals: a member Lease's renewTime in the controller's snapshot is
// when the controller saw it renewed, on its own clock; other Leases and a
// Lease never renewed are left as written.
#include "controller/lease_renewals.h"

#include <gtest/gtest.h>

#include <array>

#include "adapters/kubernetes/object_fields.h"
#include "engine/common/json_value.h"

namespace ruleplane {
namespace {

using std::chrono::seconds;

// An Etcd etcd-main observed at `observed_at` with these Leases ({name, uid, renewTime}).
Snapshot Observed(const std::string& observed_at, std::initializer_list<std::array<const char*, 3>> leases) {
  Value::List items;
  for (const auto& [name, uid, renew_time] : leases) {
    Value::Map spec{{Value::String("holderIdentity"), Value::String("8e9e05c52164694d:Leader")}};
    if (*renew_time != '\0') spec.emplace_back(Value::String("renewTime"), Value::String(renew_time));
    items.push_back(Value::MakeMap(
        {{Value::String("metadata"), Value::MakeMap({{Value::String("name"), Value::String(name)},
                                                     {Value::String("uid"), Value::String(uid)}})},
         {Value::String("spec"), Value::MakeMap(std::move(spec))}}));
  }
  auto snapshot = SnapshotFromValue(Value::MakeMap(
      {{Value::String("apiVersion"), Value::String("ruleplane.dev/v1")},
       {Value::String("kind"), Value::String("EtcdClusterSnapshot")},
       {Value::String("observedAt"), Value::String(observed_at)},
       {Value::String("etcd"),
        Value::MakeMap({{Value::String("metadata"),
                         Value::MakeMap({{Value::String("name"), Value::String("etcd-main")},
                                         {Value::String("namespace"), Value::String("default")}})}})},
       {Value::String("leases"), Value::MakeList(std::move(items))}}));
  EXPECT_TRUE(snapshot.ok()) << snapshot.error().message;
  return snapshot.ok() ? *snapshot : Snapshot{};
}

// The renewTime of Lease `name` in `snapshot`.
std::string RenewTime(const Result<Snapshot>& snapshot, const std::string& name) {
  EXPECT_TRUE(snapshot.ok()) << snapshot.error().message;
  if (!snapshot.ok()) return "(error)";
  for (const Value& lease : FieldList(snapshot->document, {"leases"})) {
    if (FieldText(lease, {"metadata", "name"}) == name) return FieldText(lease, {"spec", "renewTime"});
  }
  return "(no lease)";
}

TEST(LeaseRenewals, AMemberLeaseIsAsFreshAsItsLastObservedRenewal) {
  LeaseRenewals renewals;
  const auto start = std::chrono::steady_clock::time_point() + std::chrono::hours(10);
  // Written by a node 5 minutes behind; first seen at 10:00:00: as old as written.
  auto first = renewals.Observed(
      Observed("2026-11-29T10:00:00Z", {{"etcd-main-1", "u1", "2026-11-29T09:55:00.000000Z"}}), start);
  EXPECT_EQ(RenewTime(first, "etcd-main-1"), "2026-11-29T09:55:00.000000Z");
  // Not renewed since: it ages on the controller's clock.
  auto unchanged = renewals.Observed(
      Observed("2026-11-29T10:00:30Z", {{"etcd-main-1", "u1", "2026-11-29T09:55:00.000000Z"}}),
      start + seconds(30));
  EXPECT_EQ(RenewTime(unchanged, "etcd-main-1"), "2026-11-29T09:55:00.000000Z");
  // Renewed (a new renewTime, still 5 minutes behind): renewed when seen so.
  auto renewed = renewals.Observed(
      Observed("2026-11-29T10:00:35Z", {{"etcd-main-1", "u1", "2026-11-29T09:55:34.000000Z"}}),
      start + seconds(35));
  EXPECT_EQ(RenewTime(renewed, "etcd-main-1"), "2026-11-29T10:00:35.000000Z");
  // The controller's wall clock jumps an hour ahead: the renewal is still 10 s old.
  auto jumped = renewals.Observed(
      Observed("2026-11-29T11:00:45Z", {{"etcd-main-1", "u1", "2026-11-29T09:55:34.000000Z"}}),
      start + seconds(45));
  EXPECT_EQ(RenewTime(jumped, "etcd-main-1"), "2026-11-29T11:00:35.000000Z");
}

TEST(LeaseRenewals, ALeaseFirstSeenWithARenewTimeInTheFutureIsRenewedNow) {
  LeaseRenewals renewals;
  const auto start = std::chrono::steady_clock::time_point() + std::chrono::hours(10);
  auto first = renewals.Observed(
      Observed("2026-11-29T10:00:00Z", {{"etcd-main-0", "u0", "2026-11-29T10:05:00.000000Z"}}), start);
  EXPECT_EQ(RenewTime(first, "etcd-main-0"), "2026-11-29T10:00:00.000000Z");
  auto later = renewals.Observed(
      Observed("2026-11-29T10:00:50Z", {{"etcd-main-0", "u0", "2026-11-29T10:05:00.000000Z"}}),
      start + seconds(50));
  EXPECT_EQ(RenewTime(later, "etcd-main-0"), "2026-11-29T10:00:00.000000Z")
      << "expires 40 s on, not 5 min later";
}

TEST(LeaseRenewals, ALeaseOfTheSameNameButAnotherUidIsSeenAfresh) {
  LeaseRenewals renewals;
  const auto start = std::chrono::steady_clock::time_point() + std::chrono::hours(10);
  (void)renewals.Observed(
      Observed("2026-11-29T10:00:00Z", {{"etcd-main-0", "old", "2026-11-29T10:00:00.000000Z"}}), start);
  auto renewed = renewals.Observed(
      Observed("2026-11-29T10:00:20Z", {{"etcd-main-0", "old", "2026-11-29T10:00:10.000000Z"}}),
      start + seconds(20));
  EXPECT_EQ(RenewTime(renewed, "etcd-main-0"), "2026-11-29T10:00:20.000000Z");
  // Re-created with the old one's last renewTime: judged as written, not as a renewal seen.
  auto replaced = renewals.Observed(
      Observed("2026-11-29T10:00:30Z", {{"etcd-main-0", "new", "2026-11-29T10:00:10.000000Z"}}),
      start + seconds(30));
  EXPECT_EQ(RenewTime(replaced, "etcd-main-0"), "2026-11-29T10:00:10.000000Z");
}

TEST(LeaseRenewals, SnapshotLeasesAndLeasesNeverRenewedAreLeftAsWritten) {
  LeaseRenewals renewals;
  const auto start = std::chrono::steady_clock::time_point() + std::chrono::hours(10);
  auto observed = renewals.Observed(
      Observed("2026-11-29T10:00:00Z", {{"etcd-main-full-snap", "f", "2026-11-29T01:00:00.000000Z"},
                                        {"etcd-main-2", "u2", ""},
                                        {"other-0", "o", "2026-11-29T09:00:00.000000Z"}}),
      start);
  EXPECT_EQ(RenewTime(observed, "etcd-main-full-snap"), "2026-11-29T01:00:00.000000Z");
  EXPECT_EQ(RenewTime(observed, "etcd-main-2"), "");
  EXPECT_EQ(RenewTime(observed, "other-0"), "2026-11-29T09:00:00.000000Z");
}

}  // namespace
}  // namespace ruleplane
