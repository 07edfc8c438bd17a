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

// One LeaseRenewals fed observations of one member Lease, `after` its first.
class LeaseRenewalsTest : public ::testing::Test {
 protected:
  // The renewTime that Lease `name` (of `uid`, written `renew_time`) gets in an observation at `observed_at`.
  std::string SeenAs(seconds after, const char* observed_at, const char* name, const char* uid,
                     const char* renew_time) {
    return RenewTime(renewals_.Observed(Observed(observed_at, {{name, uid, renew_time}}), start_ + after),
                     name);
  }

  LeaseRenewals renewals_;
  const std::chrono::steady_clock::time_point start_ =
      std::chrono::steady_clock::time_point() + std::chrono::hours(10);
};

TEST_F(LeaseRenewalsTest, AMemberLeaseIsAsFreshAsItsLastObservedRenewal) {
  // Written by a node 5 minutes behind; first seen at 10:00:00: as old as written.
  EXPECT_EQ(SeenAs(seconds(0), "2026-11-29T10:00:00Z", "etcd-main-1", "u1", "2026-11-29T09:55:00.000000Z"),
            "2026-11-29T09:55:00.000000Z");
  // Not renewed since: it ages on the controller's clock.
  EXPECT_EQ(SeenAs(seconds(30), "2026-11-29T10:00:30Z", "etcd-main-1", "u1", "2026-11-29T09:55:00.000000Z"),
            "2026-11-29T09:55:00.000000Z");
  // Renewed (a new renewTime, still 5 minutes behind): renewed when seen so.
  EXPECT_EQ(SeenAs(seconds(35), "2026-11-29T10:00:35Z", "etcd-main-1", "u1", "2026-11-29T09:55:34.000000Z"),
            "2026-11-29T10:00:35.000000Z");
  // The controller's wall clock jumps an hour ahead: the renewal is still 10 s old.
  EXPECT_EQ(SeenAs(seconds(45), "2026-11-29T11:00:45Z", "etcd-main-1", "u1", "2026-11-29T09:55:34.000000Z"),
            "2026-11-29T11:00:35.000000Z");
}

TEST_F(LeaseRenewalsTest, ALeaseFirstSeenWithARenewTimeInTheFutureIsRenewedNow) {
  EXPECT_EQ(SeenAs(seconds(0), "2026-11-29T10:00:00Z", "etcd-main-0", "u0", "2026-11-29T10:05:00.000000Z"),
            "2026-11-29T10:00:00.000000Z");
  EXPECT_EQ(SeenAs(seconds(50), "2026-11-29T10:00:50Z", "etcd-main-0", "u0", "2026-11-29T10:05:00.000000Z"),
            "2026-11-29T10:00:00.000000Z")
      << "expires 40 s on, not 5 min later";
}

TEST_F(LeaseRenewalsTest, ALeaseOfTheSameNameButAnotherUidIsSeenAfresh) {
  SeenAs(seconds(0), "2026-11-29T10:00:00Z", "etcd-main-0", "old", "2026-11-29T10:00:00.000000Z");
  EXPECT_EQ(SeenAs(seconds(20), "2026-11-29T10:00:20Z", "etcd-main-0", "old", "2026-11-29T10:00:10.000000Z"),
            "2026-11-29T10:00:20.000000Z");
  // Re-created with the old one's last renewTime: judged as written, not as a renewal seen.
  EXPECT_EQ(SeenAs(seconds(30), "2026-11-29T10:00:30Z", "etcd-main-0", "new", "2026-11-29T10:00:10.000000Z"),
            "2026-11-29T10:00:10.000000Z");
}

TEST_F(LeaseRenewalsTest, SnapshotLeasesAndLeasesNeverRenewedAreLeftAsWritten) {
  auto observed = renewals_.Observed(
      Observed("2026-11-29T10:00:00Z", {{"etcd-main-full-snap", "f", "2026-11-29T01:00:00.000000Z"},
                                        {"etcd-main-2", "u2", ""},
                                        {"other-0", "o", "2026-11-29T09:00:00.000000Z"}}),
      start_);
  EXPECT_EQ(RenewTime(observed, "etcd-main-full-snap"), "2026-11-29T01:00:00.000000Z");
  EXPECT_EQ(RenewTime(observed, "etcd-main-2"), "");
  EXPECT_EQ(RenewTime(observed, "other-0"), "2026-11-29T09:00:00.000000Z");
}

}  // namespace
}  // namespace ruleplane
