// `ruleplane member-init` on a real 3-member etcd cluster, run as an init
// container runs it: the binary, with flags, before each member's etcd starts
// from the configuration it wrote. The test plays etcd-druid (it writes the
// Etcd object's status) and the kubelet (it starts and stops the members).
// Each scenario is one of DEP-01's initialization decisions, checked on the
// real cluster: members, keys written by a writer that never stops
// acknowledging, hashkv, the files left behind.
#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "adapters/etcd/etcdctl_hashkv.h"
#include "adapters/local/data_dir.h"
#include "adapters/local/snapshot_file.h"
#include "platform/failure_point.h"
#include "tests/support/member_harness.h"
#include "tests/support/source_paths.h"

namespace ruleplane::testing {
namespace {

namespace fs = std::filesystem;

class MemberInit : public ::testing::Test, protected MemberHarness {
 protected:
  void SetUp() override { ASSERT_TRUE(Create(size_, "member-init").ok()); }

  void TearDown() override {
    if (HasFailure()) {
      for (int i = 0; i < size_; ++i)
        std::cerr << "--- " << cluster_->member(i).log_path << " kept in " << root_->path() << "\n";
    }
  }
};

class SingleMemberInit : public MemberInit {
 protected:
  SingleMemberInit() { size_ = 1; }
};

TEST_F(MemberInit, BootstrapThenARestartWithValidDataReusesTheConfiguration) {
  ASSERT_NO_FATAL_FAILURE(Bootstrap());
  NumberedWriter writer(cluster_->ClientUrls(), "boot/");
  ASSERT_TRUE(writer.WriteSome(50).ok());

  cluster_->StopMember(2);
  const std::string config_before = Slurp(Config(2));
  const std::string etcd = WriteEtcd(2, StatusOfCluster({"m2"}));
  Outcome dry = MemberInitOf(2, etcd, "--dry-run");
  ASSERT_EQ(dry.exit_code, 0) << dry.out << dry.err;
  EXPECT_TRUE(Contains(dry.out, "live-member-valid")) << dry.out;

  Outcome run = MemberInitOf(2, etcd);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_TRUE(Contains(run.out, "ReuseEtcdConfig")) << run.out;
  EXPECT_EQ(Slurp(Config(2)), config_before);
  EXPECT_TRUE(Beside(2, ".").empty()) << "nothing may be moved aside";

  ASSERT_TRUE(cluster_->StartMemberWithConfig(2, Config(2)).ok());
  ASSERT_TRUE(cluster_->WaitReady(2).ok());
  ASSERT_TRUE(writer.WriteSome(20).ok());
  ExpectHealthyCluster();
  ExpectNoKeyLost(writer);

  Outcome history = History(2);
  ASSERT_EQ(history.exit_code, 0) << history.err;
  EXPECT_TRUE(Contains(history.out, "ReuseEtcdConfig")) << history.out;
}

// etcd-backup-restore's safe_guard: a member's first start leaves the file
// beside its data directory, naming its namespace. A volume whose file names
// another namespace (mounted into the wrong Etcd) is not started on under
// today's rules: member-init aborts and touches nothing. Its own namespace's
// file, and the member starts on its data again.
TEST_F(MemberInit, TheFirstStartLeavesASafeGuardAndAVolumeOfAnotherNamespaceIsLeftAlone) {
  ASSERT_NO_FATAL_FAILURE(Bootstrap());
  const std::string guard = SafeGuardPath(DataDir(2));
  EXPECT_EQ(Slurp(guard), "default");

  cluster_->StopMember(2);
  std::ofstream(guard, std::ios::trunc) << "shoot--other--cluster";
  const std::string etcd = WriteEtcd(2, StatusOfCluster({"m2"}));
  const std::string config_before = Slurp(Config(2));
  Outcome refused = MemberInitOf(2, etcd, "--rules etcd-backup-restore@2");
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_TRUE(Contains(refused.out + refused.err, "wrong volume mounted")) << refused.out << refused.err;
  EXPECT_EQ(Slurp(guard), "shoot--other--cluster") << "the file is the volume's, never rewritten";
  EXPECT_EQ(Slurp(Config(2)), config_before);
  EXPECT_TRUE(Beside(2, ".").empty()) << "nothing may be moved aside";

  std::ofstream(guard, std::ios::trunc) << "default";
  Outcome run = MemberInitOf(2, etcd, "--rules etcd-backup-restore@2");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  ASSERT_TRUE(cluster_->StartMemberWithConfig(2, Config(2)).ok());
  ASSERT_TRUE(cluster_->WaitReady(2).ok());
  ExpectHealthyCluster();
}

TEST_F(MemberInit, ALostDataDirectoryIsReplacedAndTheMemberRejoins) {
  ASSERT_NO_FATAL_FAILURE(Bootstrap());
  NumberedWriter writer(cluster_->ClientUrls(), "lost/");
  ASSERT_TRUE(writer.WriteSome(30).ok());
  Outcome backup = Backup("full");
  ASSERT_EQ(backup.exit_code, 0) << backup.out << backup.err;
  writer.Start();

  cluster_->StopMember(1);
  const std::vector<StatusMember> status = StatusOfCluster({"m1"});
  fs::remove_all(DataDir(1));  // the volume is gone: no WAL, no database
  const std::string etcd = WriteEtcd(1, status);

  // The dry run prints every request and command and changes nothing.
  Outcome dry = MemberInitOf(1, etcd, "--dry-run");
  ASSERT_EQ(dry.exit_code, 0) << dry.out << dry.err;
  EXPECT_TRUE(Contains(dry.out, "restart-quorate-no-metadata")) << dry.out;
  EXPECT_TRUE(Contains(dry.out, "/v3/cluster/member/remove")) << dry.out;
  EXPECT_TRUE(Contains(dry.out, "/v3/cluster/member/add")) << dry.out;
  EXPECT_TRUE(Contains(dry.out, "etcdctl snapshot restore")) << dry.out;
  EXPECT_FALSE(fs::exists(DataDir(1)));
  EXPECT_EQ(StatusOfCluster().size(), 3u);

  // Killed right after the member was added, before the journal recorded it.
  Outcome killed = MemberInitOf(1, etcd, "", "RULEPLANE_FAILPOINT=after:AddMember");
  ASSERT_EQ(killed.exit_code, kFailPointExitCode) << killed.out << killed.err;
  // The rerun finds itself added but never started in the live member list:
  // it joins as that member, and adds no second one.
  Outcome rerun = MemberInitOf(1, etcd);
  ASSERT_EQ(rerun.exit_code, 0) << rerun.out << rerun.err;
  EXPECT_TRUE(Contains(rerun.out, "live-join-unstarted")) << rerun.out;
  EXPECT_FALSE(Contains(rerun.out, "/v3/cluster/member/add")) << rerun.out;
  EXPECT_TRUE(Contains(Slurp(Config(1)), "initial-cluster-state: existing")) << Slurp(Config(1));

  ASSERT_TRUE(cluster_->StartMemberWithConfig(1, Config(1)).ok());
  ASSERT_TRUE(cluster_->WaitReady(1).ok()) << cluster_->member(1).log_path;
  writer.Stop();
  ExpectHealthyCluster();
  ExpectNoKeyLost(writer);
  EXPECT_NE(StatusOfCluster()[0].id, "");

  Outcome history = History(1, "-o json");
  ASSERT_EQ(history.exit_code, 0) << history.err;
  EXPECT_TRUE(Contains(history.out, "restart-quorate-no-metadata")) << history.out;
  EXPECT_TRUE(Contains(history.out, "live-join-unstarted")) << history.out;
}

TEST_F(MemberInit, ACorruptDatabaseIsMovedAsideAndTheMemberRejoins) {
  ASSERT_NO_FATAL_FAILURE(Bootstrap());
  NumberedWriter writer(cluster_->ClientUrls(), "corrupt/");
  ASSERT_TRUE(writer.WriteSome(30).ok());
  Outcome backup = Backup("full");
  ASSERT_EQ(backup.exit_code, 0) << backup.out << backup.err;
  writer.Start();

  cluster_->StopMember(1);
  const std::string db = DataDir(1) + "/member/snap/db";
  auto corrupt_size = CorruptDatabase(1);
  ASSERT_TRUE(corrupt_size.ok()) << corrupt_size.error().message;
  const std::string etcd = WriteEtcd(1, StatusOfCluster({"m1"}));

  Outcome dry = MemberInitOf(1, etcd, "--dry-run");
  ASSERT_EQ(dry.exit_code, 0) << dry.out << dry.err;
  EXPECT_TRUE(Contains(dry.out, "restart-quorate-invalid-data")) << dry.out;
  EXPECT_TRUE(Contains(dry.out, "rename " + DataDir(1) + " -> ")) << dry.out;
  EXPECT_TRUE(Contains(dry.out, "etcdctl snapshot restore")) << dry.out;
  EXPECT_EQ(fs::file_size(db), *corrupt_size) << "a dry run changes nothing";
  EXPECT_TRUE(Beside(1, ".").empty()) << "a dry run moves nothing aside";

  Outcome killed = MemberInitOf(1, etcd, "", "RULEPLANE_FAILPOINT=local:restore-before-rename");
  ASSERT_EQ(killed.exit_code, kFailPointExitCode) << killed.out << killed.err;
  Outcome rerun = MemberInitOf(1, etcd);
  ASSERT_EQ(rerun.exit_code, 0) << rerun.out << rerun.err;

  // The corrupt directory is still there, moved aside, its database as it was.
  const std::vector<std::string> aside = Beside(1, ".2");
  ASSERT_EQ(aside.size(), 1u);
  EXPECT_EQ(fs::file_size(aside[0] + "/member/snap/db"), *corrupt_size);

  ASSERT_TRUE(cluster_->StartMemberWithConfig(1, Config(1)).ok());
  ASSERT_TRUE(cluster_->WaitReady(1).ok()) << cluster_->member(1).log_path;
  writer.Stop();
  ExpectHealthyCluster();
  ExpectNoKeyLost(writer);
}

// Hazard 2 of issue 23: a database etcdctl cannot check (here: etcdctl is
// not on PATH) is not a corrupt one. member-init fails, the kubelet runs it
// again, and nothing was changed meanwhile: no member removed, nothing moved
// aside, the journal as it was.
TEST_F(MemberInit, ADatabaseThatCannotBeCheckedChangesNothingAndFails) {
  ASSERT_NO_FATAL_FAILURE(Bootstrap());
  NumberedWriter writer(cluster_->ClientUrls(), "unchecked/");
  ASSERT_TRUE(writer.WriteSome(30).ok());
  Outcome backup = Backup("full");
  ASSERT_EQ(backup.exit_code, 0) << backup.out << backup.err;

  cluster_->StopMember(1);
  const std::vector<StatusMember> members = StatusOfCluster({"m1"});
  const std::string etcd = WriteEtcd(1, members);
  const std::string db = DataDir(1) + "/member/snap/db";
  const std::string db_before = Slurp(db), config_before = Slurp(Config(1));
  const std::string journal_before = Slurp(Journal(1));
  ASSERT_FALSE(journal_before.empty());
  const std::string no_etcdctl = root_->path() + "/empty-bin";
  fs::create_directories(no_etcdctl);

  for (const std::string extra : {"--dry-run", ""}) {
    Outcome unchecked = MemberInitOf(1, etcd, extra, "PATH=" + no_etcdctl);
    EXPECT_EQ(unchecked.exit_code, 1) << extra << unchecked.out << unchecked.err;
    EXPECT_TRUE(Contains(unchecked.err, "could not check the database")) << unchecked.err;
    EXPECT_TRUE(Beside(1, ".").empty()) << "nothing may be moved aside";
    EXPECT_TRUE(Slurp(db) == db_before) << "the database changed";
    EXPECT_EQ(Slurp(Config(1)), config_before);
    EXPECT_TRUE(Slurp(Journal(1)) == journal_before) << "something was journaled";
    EXPECT_EQ(StatusOfCluster().size(), 3u);
    for (const StatusMember& member : StatusOfCluster())
      EXPECT_NE(std::find_if(members.begin(), members.end(),
                             [&](const StatusMember& before) { return before.id == member.id; }),
                members.end())
          << member.name << " " << member.id << " was not a member before";
  }

  // The member was healthy all along: it restarts from its data.
  Outcome run = MemberInitOf(1, etcd);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_TRUE(Contains(run.out, "live-member-valid")) << run.out;
  ASSERT_TRUE(cluster_->StartMemberWithConfig(1, Config(1)).ok());
  ASSERT_TRUE(cluster_->WaitReady(1).ok()) << cluster_->member(1).log_path;
  ExpectHealthyCluster();
  ExpectNoKeyLost(writer);
}

// A member that joins keeps its verified restore beside its data directory
// as "<data>.restored.<second>". Two restores within one second (member-init
// killed after its restore and run again at once) used to collide there: the
// rename failed and the initialization with it (found by the fault campaign,
// seeds 953193707 and 579804681). Names taken for the next seconds stay.
TEST_F(MemberInit, ARestoreKeptBesideTheDataNeverCollidesWithAnEarlierOne) {
  ASSERT_NO_FATAL_FAILURE(Bootstrap());
  NumberedWriter writer(cluster_->ClientUrls(), "restored/");
  ASSERT_TRUE(writer.WriteSome(30).ok());
  Outcome backup = Backup("full");
  ASSERT_EQ(backup.exit_code, 0) << backup.out << backup.err;

  cluster_->StopMember(1);
  const std::vector<StatusMember> status = StatusOfCluster({"m1"});
  fs::rename(DataDir(1), DataDir(1) + ".lost-by-test");
  const auto now = std::chrono::system_clock::now();
  for (int second = 0; second < 20; ++second) {
    const std::time_t at = std::chrono::system_clock::to_time_t(now + std::chrono::seconds(second));
    std::tm utc{};
    gmtime_r(&at, &utc);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
    fs::create_directories(DataDir(1) + ".restored." + stamp + "/member");
    std::ofstream(DataDir(1) + ".restored." + stamp + "/member/earlier") << "an earlier restore";
  }

  Outcome run = MemberInitOf(1, WriteEtcd(1, status));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_TRUE(Contains(run.out, "restart-quorate-no-metadata")) << run.out;
  const std::vector<std::string> restored = Beside(1, ".restored.");
  EXPECT_EQ(restored.size(), 21u);
  for (const std::string& path : restored) {
    EXPECT_TRUE(fs::exists(path + "/member/earlier") || fs::exists(path + "/member/snap/db")) << path;
  }

  ASSERT_TRUE(cluster_->StartMemberWithConfig(1, Config(1)).ok());
  ASSERT_TRUE(cluster_->WaitReady(1).ok()) << cluster_->member(1).log_path;
  ExpectHealthyCluster();
  ExpectNoKeyLost(writer);
}

// Hazard 19: --dry-run changes nothing, the journal included: none is
// created, and an existing one stays as it was.
TEST_F(MemberInit, ADryRunWritesNoJournal) {
  const std::string etcd = WriteEtcd(0, {});
  auto journal_files = [&] {
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(Dir(0))) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("ruleplane-journal.db", 0) == 0)
        found.push_back(name + " " + Slurp(entry.path().string()));
    }
    return found;
  };
  Outcome first_dry = MemberInitOf(0, etcd, "--dry-run");
  ASSERT_EQ(first_dry.exit_code, 0) << first_dry.out << first_dry.err;
  EXPECT_TRUE(Contains(first_dry.out, "first-member-bootstrap")) << first_dry.out;
  EXPECT_TRUE(journal_files().empty()) << "a dry run created the journal";
  EXPECT_FALSE(fs::exists(Config(0))) << "a dry run writes no configuration";

  Outcome run = MemberInitOf(0, etcd);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  Outcome plans_before = History(0, "-o json");
  ASSERT_EQ(plans_before.exit_code, 0) << plans_before.err;
  const std::vector<std::string> journal_before = journal_files();
  ASSERT_FALSE(journal_before.empty());

  Outcome dry = MemberInitOf(0, etcd, "--dry-run");
  ASSERT_EQ(dry.exit_code, 0) << dry.out << dry.err;
  EXPECT_TRUE(journal_files() == journal_before) << "a dry run changed the journal";
  Outcome plans_after = History(0, "-o json");
  ASSERT_EQ(plans_after.exit_code, 0) << plans_after.err;
  EXPECT_EQ(plans_after.out, plans_before.out);
}

TEST_F(MemberInit, WithoutQuorumAValidMemberRestartsAndALostOneWaits) {
  ASSERT_NO_FATAL_FAILURE(Bootstrap());
  NumberedWriter writer(cluster_->ClientUrls(), "quorum/");
  ASSERT_TRUE(writer.WriteSome(30).ok());
  const std::vector<StatusMember> status = StatusOfCluster({"m1", "m2"});
  cluster_->StopMember(1);
  cluster_->StopMember(2);

  // m2 lost its data while the cluster has no quorum: it must not be replaced.
  const std::string moved = DataDir(2) + ".by-test";
  fs::rename(DataDir(2), moved);
  const std::string etcd_of_2 = WriteEtcd(2, status);
  Outcome waits = MemberInitOf(2, etcd_of_2);
  EXPECT_EQ(waits.exit_code, 1) << waits.out << waits.err;
  EXPECT_TRUE(Contains(waits.out + waits.err, "quorum")) << waits.out << waits.err;
  EXPECT_FALSE(fs::exists(DataDir(2))) << "an aborted initialization changes nothing";

  // With --wait-for-cluster it observes again until m1 is back, and then
  // replaces itself in the quorate cluster. m1 restarts only once m2 has
  // said that it waits: a slow start (sanitizers) must not see m1 back first.
  const std::string waiting_log = Dir(2) + "/member-init.wait.log";
  std::future<Outcome> waiting = std::async(std::launch::async, [&] {
    return Shell("{ " + std::string(RuleplaneBinary()) + " " + MemberInitArgs(2, etcd_of_2) +
                 " --wait-for-cluster=120 2>" + waiting_log + "; }");
  });
  ASSERT_TRUE(Eventually([&] { return Contains(Slurp(waiting_log), "observing again in 2 s"); },
                         std::chrono::seconds(60)))
      << Slurp(waiting_log);
  Outcome restart = MemberInitOf(1, WriteEtcd(1, status));
  ASSERT_EQ(restart.exit_code, 0) << restart.out << restart.err;
  EXPECT_TRUE(Contains(restart.out, "live-member-valid")) << restart.out;
  ASSERT_TRUE(cluster_->StartMemberWithConfig(1, Config(1)).ok());
  ASSERT_TRUE(cluster_->WaitReady(1).ok());

  const Outcome waited = waiting.get();
  ASSERT_EQ(waited.exit_code, 0) << waited.out << Slurp(waiting_log);
  EXPECT_TRUE(Contains(waited.out, "/v3/cluster/member/add") || Contains(waited.out, "AddMember"))
      << waited.out;
  ASSERT_TRUE(cluster_->StartMemberWithConfig(2, Config(2)).ok());
  ASSERT_TRUE(cluster_->WaitReady(2).ok());
  ExpectHealthyCluster();
  ExpectNoKeyLost(writer);
  EXPECT_TRUE(fs::exists(moved)) << "the test's copy of the lost data is untouched";
}

// A first member waiting for the cluster (--wait-for-cluster) after every
// member was lost reads the Etcd again each round: the re-bootstrap marker an
// approved quorum-loss plan writes while it waits lets it restore without a
// restart. Before, it planned every round on the Etcd it read at its start
// and waited out its 40 s.
TEST_F(MemberInit, AFirstMemberWaitingForTheClusterRestoresOnceTheMarkerComes) {
  ASSERT_NO_FATAL_FAILURE(Bootstrap());
  NumberedWriter writer(cluster_->ClientUrls(), "marker/");
  ASSERT_TRUE(writer.WriteSome(30).ok());
  const Outcome full = Backup("full");
  ASSERT_EQ(full.exit_code, 0) << full.out << full.err;
  auto listing = OpenStore()->List();
  ASSERT_TRUE(listing.ok()) << listing.error().message;
  ASSERT_EQ(listing->snapshots.size(), 1u);
  const int64_t backup_revision = listing->snapshots[0].last_revision;
  for (int i = 0; i < 3; ++i) {
    cluster_->StopMember(i);
    fs::rename(DataDir(i), DataDir(i) + ".lost-by-test");
  }

  // The Etcd it waits on, replaced whole (a rename) once the marker is on it.
  const std::string etcd = Dir(0) + "/etcd.waiting.json";
  fs::rename(WriteEtcd(0, {}), etcd);
  const std::string waiting_log = Dir(0) + "/member-init.wait.log";
  std::future<Outcome> waiting = std::async(std::launch::async, [&] {
    return Shell("{ " + std::string(RuleplaneBinary()) + " " + MemberInitArgs(0, etcd) +
                 " --wait-for-cluster=40 2>" + waiting_log + "; }");
  });
  ASSERT_TRUE(Eventually([&] { return Contains(Slurp(waiting_log), "observing again in 2 s"); },
                         std::chrono::seconds(30)))
      << Slurp(waiting_log);
  EXPECT_TRUE(Contains(Slurp(waiting_log), "approved quorum-loss plan")) << Slurp(waiting_log);
  EXPECT_FALSE(fs::exists(DataDir(0))) << "nothing changed while it waits";
  fs::rename(WriteEtcd(0, {}, std::to_string(backup_revision) + ":auto"), etcd);

  const Outcome waited = waiting.get();
  ASSERT_EQ(waited.exit_code, 0) << waited.out << Slurp(waiting_log);
  EXPECT_TRUE(Contains(waited.out, "first-member-restore")) << waited.out;
  ASSERT_TRUE(cluster_->StartMemberWithConfig(0, Config(0)).ok());
  ASSERT_TRUE(cluster_->WaitReady(0).ok());
  ExpectNoKeyLost(writer, backup_revision);
}

// Two of three members down for longer than an election timeout: the member
// left answers without a leader. Each restarting member has valid data of
// that cluster and restarts on it. Found by the fault campaign (seed
// 843272643, two members SIGKILLed at once): the live cluster's ID was taken
// only from a member with a leader, so both waited for a quorum that only
// they could bring back, and the cluster never recovered.
TEST_F(MemberInit, TwoMembersDownLongerThanAnElectionTimeoutRestartOnTheirData) {
  ASSERT_NO_FATAL_FAILURE(Bootstrap());
  NumberedWriter writer(cluster_->ClientUrls(), "two-down/");
  ASSERT_TRUE(writer.WriteSome(30).ok());
  const std::vector<StatusMember> status = StatusOfCluster({"m1", "m2"});
  cluster_->KillMember(1);
  cluster_->KillMember(2);
  ASSERT_TRUE(cluster_->WaitLeaderless(0, std::chrono::seconds(20))) << "m0 still has a leader";

  for (int i : {1, 2}) {
    Outcome restart = MemberInitOf(i, WriteEtcd(i, status));
    ASSERT_EQ(restart.exit_code, 0) << restart.out << restart.err;
    EXPECT_TRUE(Contains(restart.out, "live-member-valid")) << restart.out;
    EXPECT_TRUE(Beside(i, ".").empty()) << "valid data is never moved aside";
    ASSERT_TRUE(cluster_->StartMemberWithConfig(i, Config(i)).ok());
  }
  for (int i : {1, 2}) ASSERT_TRUE(cluster_->WaitReady(i).ok()) << cluster_->member(i).log_path;
  ASSERT_TRUE(writer.WriteSome(10).ok());
  ExpectHealthyCluster();
  ExpectNoKeyLost(writer);
}

// Member 0 started from the configuration member-init wrote, the writer
// stopped: one cluster (every member reports the same cluster ID) that
// agrees on the data and lost no acknowledged key.
void RejoinsOneClusterThatLostNothing(MemberHarness& harness, NumberedWriter& writer) {
  ASSERT_TRUE(harness.cluster_->StartMemberWithConfig(0, harness.Config(0)).ok());
  ASSERT_TRUE(harness.cluster_->WaitReady(0).ok()) << harness.cluster_->member(0).log_path;
  writer.Stop();
  EtcdClient client = harness.cluster_->Client();
  RequestLog reads;
  std::set<uint64_t> cluster_ids;
  for (int i = 0; i < 3; ++i) {
    auto status = client.MemberStatus(harness.cluster_->member(i).client_url, reads);
    ASSERT_TRUE(status.ok()) << status.error().message;
    cluster_ids.insert(status->cluster_id);
  }
  EXPECT_EQ(cluster_ids.size(), 1u) << "two clusters answer";
  harness.ExpectHealthyCluster();
  harness.ExpectNoKeyLost(writer);
}

// Issue 23, hazard 1: the status is empty in normal windows (a new cluster
// before the controller's first status write, a controller that is down).
// A first member restarted then must rejoin its cluster with its data: up to
// initialization 1.1.0 it moved its data aside and restored the backup as a
// one-member cluster of its own beside the other two, a split brain.
TEST_F(MemberInit, AFirstMemberRestartedBeforeTheStatusIsWrittenRejoinsItsCluster) {
  ASSERT_NO_FATAL_FAILURE(Bootstrap());
  NumberedWriter writer(cluster_->ClientUrls(), "empty-status/");
  ASSERT_TRUE(writer.WriteSome(30).ok());
  Outcome backup = Backup("full");
  ASSERT_EQ(backup.exit_code, 0) << backup.out << backup.err;
  writer.Start();

  cluster_->StopMember(0);
  // The WAL's cluster ID is the one the other members report (a WAL record
  // of another type was read as the metadata up to 1.1.0).
  EtcdClient live = cluster_->Client();
  RequestLog status_reads;
  auto live_status = live.MemberStatus(cluster_->member(1).client_url, status_reads);
  ASSERT_TRUE(live_status.ok()) << live_status.error().message;
  auto data_dir = InspectDataDir(DataDir(0), 0, "default");
  ASSERT_TRUE(data_dir.ok()) << data_dir.error().message;
  EXPECT_EQ(data_dir->cluster_id, MemberIdHex(live_status->cluster_id));

  Outcome run = MemberInitOf(0, WriteEtcd(0, {}));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_TRUE(Contains(run.out, "live-member-valid")) << run.out;
  EXPECT_FALSE(Contains(run.out, "RestoreFullSnapshot")) << run.out;
  EXPECT_TRUE(Beside(0, ".").empty()) << "valid data is never moved aside while its cluster answers";

  RejoinsOneClusterThatLostNothing(*this, writer);
}

// Issue 41, hazard 1: a scale-up from one member. The StatefulSet has 3
// replicas and members m1 and m2 joined, but the status still says one
// member and the configuration template still names m0 alone; m0 restarts
// (a drain, an OOM kill) while m1 and m2 hold the quorum and took a backup
// past m0's data. Up to initialization 1.4.0 m0 was "the only member" with
// data behind the backup: it moved its valid data aside, restored and
// started a one-member cluster beside the other two, a split brain. Now the
// spec's 3 replicas say it is not alone: it restarts on its data and rejoins.
TEST_F(MemberInit, AfterAScaleUpFromOneTheFirstMemberRestartedBeforeTheStatusFollowsRejoinsItsCluster) {
  ASSERT_NO_FATAL_FAILURE(Bootstrap());
  NumberedWriter writer(cluster_->ClientUrls(), "grown-from-one/");
  ASSERT_TRUE(writer.WriteSome(30).ok());
  cluster_->StopMember(0);
  ASSERT_TRUE(writer.WriteSome(30).ok());
  Outcome backup = Backup("full");
  ASSERT_EQ(backup.exit_code, 0) << backup.out << backup.err;
  writer.Start();

  // What m0's Pod sees in the window: the template rendered for one member, the status of one member.
  Outcome run = Ruleplane(MemberInitArgsInScaleUpWindow(0));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_FALSE(Contains(run.out, "RestoreFullSnapshot")) << run.out;
  EXPECT_TRUE(Beside(0, ".").empty())
      << "valid data is never moved aside while the cluster can have other members";

  RejoinsOneClusterThatLostNothing(*this, writer);
}

// Issue 41, hazard 11: etcd derives a cluster's ID from its first members'
// peer URLs and the initial-cluster-token, and etcd-druid's template says
// "etcd-cluster" for every Etcd: an Etcd deleted and created again with the
// same name and size bootstrapped a cluster with the same ID as the first
// one, and the backup store (KeepCluster, the chain checks) could not tell
// the two histories apart. The token now carries the Etcd's uid: another
// uid, another cluster ID; the same uid, the same one.
TEST_F(MemberInit, AnEtcdCreatedAgainUnderTheSameNameBootstrapsAClusterWithAnotherId) {
  std::map<std::string, uint64_t> ids;
  for (const std::string uid : {"3f2a9c10-first", "7d41e6b2-again", "3f2a9c10-first"}) {
    etcd_uid_ = uid;
    ASSERT_NO_FATAL_FAILURE(Bootstrap());
    auto view = ViewOf(0);
    ASSERT_TRUE(view.ok()) << view.error().message;
    EXPECT_TRUE(Contains(Slurp(Config(0)), "initial-cluster-token: etcd-cluster-" + uid)) << Slurp(Config(0));
    if (ids.count(uid) != 0) {
      EXPECT_EQ(view->cluster_id, ids[uid]) << "the same Etcd, the same cluster ID";
    } else {
      for (const auto& [other, id] : ids)
        EXPECT_NE(view->cluster_id, id) << "the Etcd " << uid << " bootstrapped the cluster of " << other;
      ids[uid] = view->cluster_id;
    }
    // The Etcd deleted: its members stopped, their volumes gone with the Pods.
    for (int i = 0; i < size_; ++i) {
      cluster_->StopMember(i);
      fs::rename(DataDir(i), DataDir(i) + ".etcd-" + uid + "-" + std::to_string(ids.size()));
      fs::remove(Config(i));
    }
  }
}

// DEP-01 scenarios 7 and 8: every data directory lost. The first member
// restores the latest full snapshot (and the deltas after it, when there
// are any) into a single-member cluster; the others join it one by one.
// `deltas` deltas are taken while the writer runs; with none, the writer
// stops before the full snapshot, so that it holds every key.
// Then (issue 41, hazard 5) a second total loss after a new backup: the
// first incident's marker, still on the Etcd, re-creates nothing.
TEST_F(MemberInit, AfterQuorumLossTheFirstMemberRestoresTheFullSnapshotAndTheOthersJoin) {
  RebuildAfterQuorumLoss(0, false, true);
}

TEST_F(MemberInit, AfterQuorumLossTheFirstMemberRestoresFullAndDeltasAndTheOthersJoin) {
  RebuildAfterQuorumLoss(2);
}

// Issue 23, hazard 14: a gap in the deltas used to commit a wrong transaction
// (one more per retry), and the rerun built on it once the delta was back.
TEST_F(MemberInit, AfterQuorumLossAMissingDeltaStopsTheReplayUntilItIsBack) {
  RebuildAfterQuorumLoss(3, true);
}

// Issue 23, hazard 17: a single member killed right after its restore, in a
// new Pod (the configuration it had is gone), used to want a configuration
// that was never written, and never started again.
TEST_F(SingleMemberInit, KilledRightAfterItsRestoreItStartsOnTheRestoredData) {
  ASSERT_NO_FATAL_FAILURE(Bootstrap());
  NumberedWriter writer(cluster_->ClientUrls(), "single/");
  ASSERT_TRUE(writer.WriteSome(30).ok());
  Outcome backup = Backup("full");
  ASSERT_EQ(backup.exit_code, 0) << backup.out << backup.err;

  cluster_->StopMember(0);
  fs::rename(DataDir(0), DataDir(0) + ".lost-by-test");
  fs::remove(Config(0));
  const std::string etcd = WriteEtcd(0, {{"m0", "", false}});
  Outcome killed = MemberInitOf(0, etcd, "", "RULEPLANE_FAILPOINT=after:RestoreFullSnapshot");
  ASSERT_EQ(killed.exit_code, kFailPointExitCode) << killed.out << killed.err;
  ASSERT_FALSE(fs::exists(Config(0)));

  Outcome rerun = MemberInitOf(0, etcd);
  ASSERT_EQ(rerun.exit_code, 0) << rerun.out << rerun.err;
  EXPECT_TRUE(Contains(rerun.out, "ReuseEtcdConfig")) << rerun.out;
  ASSERT_TRUE(cluster_->StartMemberWithConfig(0, Config(0)).ok());
  ASSERT_TRUE(cluster_->WaitReady(0).ok()) << cluster_->member(0).log_path;
  ExpectNoKeyLost(writer);
}

}  // namespace
}  // namespace ruleplane::testing
