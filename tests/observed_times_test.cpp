// ObservedTimes: a member Lease's renewTime in the controller's snapshot is
// when the controller saw it renewed, on its own clock; other Leases and a
// Lease never renewed are left as written. The last disruptive step's time
// is when the controller saw it written, unless it was written over an hour
// before it was first seen.
#include "controller/observed_times.h"

#include <gtest/gtest.h>

#include <array>

#include "adapters/kubernetes/object_fields.h"
#include "engine/common/json_value.h"

namespace ruleplane {
namespace {

using std::chrono::seconds;

// An Etcd etcd-main observed at `observed_at` with these Leases ({name, uid, renewTime}) and, unless
// "", this lastDisruptiveStepTime on its status.
Snapshot Observed(const std::string& observed_at, std::initializer_list<std::array<const char*, 3>> leases,
                  const std::string& last_disruptive_step_time = "") {
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
        Value::MakeMap(
            {{Value::String("metadata"),
              Value::MakeMap({{Value::String("name"), Value::String("etcd-main")},
                              {Value::String("namespace"), Value::String("default")},
                              {Value::String("uid"), Value::String("e1")}})},
             {Value::String("status"),
              Value::MakeMap({{Value::String("lastOperation"),
                               last_disruptive_step_time.empty()
                                   ? Value::MakeMap({})
                                   : Value::MakeMap({{Value::String("lastDisruptiveStepTime"),
                                                      Value::String(last_disruptive_step_time)}})}})}})},
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

// One ObservedTimes fed observations, `after` its first.
class ObservedTimesTest : public ::testing::Test {
 protected:
  // The renewTime that Lease `name` (of `uid`, written `renew_time`) gets in an observation at `observed_at`.
  std::string SeenAs(seconds after, const char* observed_at, const char* name, const char* uid,
                     const char* renew_time) {
    return RenewTime(times_.Observed(Observed(observed_at, {{name, uid, renew_time}}), start_ + after), name);
  }
  // The lastDisruptiveStepTime, written `written`, in an observation at `observed_at`.
  std::string StepSeenAs(seconds after, const char* observed_at, const char* written) {
    auto observed = times_.Observed(Observed(observed_at, {}, written), start_ + after);
    EXPECT_TRUE(observed.ok()) << observed.error().message;
    return observed.ok()
               ? FieldText(observed->document, {"etcd", "status", "lastOperation", "lastDisruptiveStepTime"})
               : "(error)";
  }

  ObservedTimes times_;
  const std::chrono::steady_clock::time_point start_ =
      std::chrono::steady_clock::time_point() + std::chrono::hours(10);
};

TEST_F(ObservedTimesTest, AMemberLeaseIsAsFreshAsItsLastObservedRenewal) {
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

TEST_F(ObservedTimesTest, ALeaseFirstSeenWithARenewTimeInTheFutureIsRenewedNow) {
  EXPECT_EQ(SeenAs(seconds(0), "2026-11-29T10:00:00Z", "etcd-main-0", "u0", "2026-11-29T10:05:00.000000Z"),
            "2026-11-29T10:00:00.000000Z");
  EXPECT_EQ(SeenAs(seconds(50), "2026-11-29T10:00:50Z", "etcd-main-0", "u0", "2026-11-29T10:05:00.000000Z"),
            "2026-11-29T10:00:00.000000Z")
      << "expires 40 s on, not 5 min later";
}

TEST_F(ObservedTimesTest, ALeaseOfTheSameNameButAnotherUidIsSeenAfresh) {
  SeenAs(seconds(0), "2026-11-29T10:00:00Z", "etcd-main-0", "old", "2026-11-29T10:00:00.000000Z");
  EXPECT_EQ(SeenAs(seconds(20), "2026-11-29T10:00:20Z", "etcd-main-0", "old", "2026-11-29T10:00:10.000000Z"),
            "2026-11-29T10:00:20.000000Z");
  // Re-created with the old one's last renewTime: judged as written, not as a renewal seen.
  EXPECT_EQ(SeenAs(seconds(30), "2026-11-29T10:00:30Z", "etcd-main-0", "new", "2026-11-29T10:00:10.000000Z"),
            "2026-11-29T10:00:10.000000Z");
}

TEST_F(ObservedTimesTest, SnapshotLeasesAndLeasesNeverRenewedAreLeftAsWritten) {
  auto observed = times_.Observed(
      Observed("2026-11-29T10:00:00Z", {{"etcd-main-full-snap", "f", "2026-11-29T01:00:00.000000Z"},
                                        {"etcd-main-2", "u2", ""},
                                        {"other-0", "o", "2026-11-29T09:00:00.000000Z"}}),
      start_);
  EXPECT_EQ(RenewTime(observed, "etcd-main-full-snap"), "2026-11-29T01:00:00.000000Z");
  EXPECT_EQ(RenewTime(observed, "etcd-main-2"), "");
  EXPECT_EQ(RenewTime(observed, "other-0"), "2026-11-29T09:00:00.000000Z");
}

TEST_F(ObservedTimesTest, ARecentDisruptiveStepIsAsOldAsTheTimeSinceItWasFirstSeen) {
  // Written 70 s ago by this machine's clock, by a replica whose clock may be
  // 40 s behind: taken to be now, then aged on the monotonic clock.
  EXPECT_EQ(StepSeenAs(seconds(0), "2026-11-29T10:00:00Z", "2026-11-29T09:58:50Z"), "2026-11-29T10:00:00Z");
  EXPECT_EQ(StepSeenAs(seconds(30), "2026-11-29T10:00:30Z", "2026-11-29T09:58:50Z"), "2026-11-29T10:00:00Z");
  // The wall clock jumps an hour ahead: the step is still 40 s old.
  EXPECT_EQ(StepSeenAs(seconds(40), "2026-11-29T11:00:40Z", "2026-11-29T09:58:50Z"), "2026-11-29T11:00:00Z");
  // Another step written (even with an older time, a rolled-back status): written when seen so.
  EXPECT_EQ(StepSeenAs(seconds(50), "2026-11-29T11:00:50Z", "2026-11-29T09:58:40Z"), "2026-11-29T11:00:50Z");
}

TEST_F(ObservedTimesTest, ADisruptiveStepWrittenOverAnHourBeforeItWasFirstSeenIsAsOldAsWritten) {
  EXPECT_EQ(StepSeenAs(seconds(0), "2026-11-29T10:00:00Z", "2026-11-29T08:30:00Z"), "2026-11-29T08:30:00Z");
  EXPECT_EQ(StepSeenAs(seconds(10), "2026-11-29T10:00:10Z", "2026-11-29T08:30:00Z"), "2026-11-29T08:30:00Z");
}

TEST_F(ObservedTimesTest, AStepTimeThatDoesNotParseIsLeftForTheGateToName) {
  EXPECT_EQ(StepSeenAs(seconds(0), "2026-11-29T10:00:00Z", "yesterday"), "yesterday");
}

}  // namespace
}  // namespace ruleplane
