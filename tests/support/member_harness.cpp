#include "tests/support/member_harness.h"

#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "adapters/etcd/etcdctl_hashkv.h"
#include "adapters/local/snapshot_file.h"
#include "platform/failure_point.h"
#include "tests/run_ruleplane.h"
#include "tests/support/source_paths.h"

namespace ruleplane::testing {
namespace {

namespace fs = std::filesystem;

}  // namespace

Status MemberHarness::Create(int size, const std::string& name) {
  size_ = size;
  root_ = std::make_unique<TempDir>(name);
  if (root_->path().empty()) return Error{ErrorCode::kIo, "cannot create a temporary directory", {}};
  cluster_ = EtcdCluster::Create(size_, root_->path());
  store_ = root_->path() + "/store/etcd-main";
  store_config_ = StoreConfig{};
  store_config_.provider = "Local";
  store_config_.container = root_->path() + "/store";
  store_config_.prefix = "etcd-main";
  for (int i = 0; i < size_; ++i) {
    std::error_code error;
    fs::create_directories(Dir(i), error);
    if (error) return Error{ErrorCode::kIo, "cannot create " + Dir(i) + ": " + error.message(), {}};
    if (Status written = cluster_->WriteConfigTemplate(i, Template(i)); !written.ok()) return written;
  }
  return {};
}

Status MemberHarness::EnableTls(bool peers_only) {
  auto pki = TestPki::Create(root_->path() + "/pki");
  if (!pki.ok()) return pki.error();
  if (!peers_only) pki_ = *pki;
  cluster_->EnableTls(*pki, peers_only);
  for (int i = 0; i < size_; ++i) {
    if (Status written = cluster_->WriteConfigTemplate(i, Template(i)); !written.ok()) return written;
  }
  return {};
}

std::string MemberHarness::TlsFlags() const { return pki_ ? " " + pki_->ClientFlags() : ""; }

std::string MemberHarness::Endpoints() const {
  std::string joined;
  for (const std::string& url : cluster_->ClientUrls()) joined += (joined.empty() ? "" : ",") + url;
  return joined;
}

std::string MemberHarness::UidField() const {
  return etcd_uid_.empty() ? "" : R"(,"uid":")" + etcd_uid_ + R"(")";
}

std::string MemberHarness::WriteEtcd(int i, const std::vector<StatusMember>& members,
                                     const std::string& rebootstrap) const {
  std::string list;
  for (const StatusMember& member : members) {
    list += std::string(list.empty() ? "" : ",") + R"({"name":")" + member.name + R"(")" +
            (member.id.empty() ? "" : R"(,"id":")" + member.id + R"(")") + R"(,"status":")" +
            (member.ready ? "Ready" : "NotReady") + R"("})";
  }
  const std::string path = Dir(i) + "/etcd.json";
  std::ofstream(path) << R"({"apiVersion":"druid.gardener.cloud/v1alpha1","kind":"Etcd",)"
                      << R"("metadata":{"name":"etcd-main","namespace":"default")" << UidField()
                      << (rebootstrap.empty()
                              ? ""
                              : R"(,"annotations":{"ruleplane.dev/rebootstrap":")" + rebootstrap + R"("})")
                      << R"(},"spec":{"replicas":)" << size_ << "},"
                      << R"("status":{"clusterSize":)" << size_ << R"(,"members":[)" << list << "]}}";
  return path;
}

Result<std::vector<StatusMember>> MemberHarness::LiveStatus(const std::vector<std::string>& not_ready) const {
  EtcdClient client = cluster_->Client();
  RequestLog reads;
  auto members = client.MemberList(reads);
  if (!members.ok()) return members.error();
  std::vector<StatusMember> status;
  for (const EtcdMember& member : *members) {
    const bool ready = std::find(not_ready.begin(), not_ready.end(), member.name) == not_ready.end();
    status.push_back({member.name, MemberIdHex(member.id), ready});
  }
  return status;
}

std::vector<StatusMember> MemberHarness::StatusOfCluster(const std::vector<std::string>& not_ready) const {
  auto status = LiveStatus(not_ready);
  EXPECT_TRUE(status.ok()) << status.error().message;
  return status.ok() ? *status : std::vector<StatusMember>{};
}

Outcome MemberHarness::Shell(const std::string& command, const std::string& env) {
  // Named after the running test (ctest runs the scenarios in parallel) and
  // numbered: a test may run two commands at once.
  static std::atomic<int> commands{0};
  const std::string number = std::to_string(++commands);
  const std::string out = testing_support::TempPath("shell-" + number + ".out");
  const std::string err = testing_support::TempPath("shell-" + number + ".err");
  const std::string line = env + (env.empty() ? "" : " ") + command + " </dev/null >" + out + " 2>" + err;
  const int status = std::system(line.c_str());
  Outcome outcome{WIFEXITED(status) ? WEXITSTATUS(status) : -1, Slurp(out), Slurp(err)};
  std::remove(out.c_str());
  std::remove(err.c_str());
  return outcome;
}

Outcome MemberHarness::Ruleplane(const std::string& args, const std::string& env) const {
  return Shell(std::string(RuleplaneBinary()) + " " + args, env);
}

std::string MemberHarness::MemberInitArgs(int i, const std::string& etcd, const std::string& config_template,
                                          const std::string& endpoints) const {
  const EtcdMemberSpec& member = cluster_->member(i);
  return "member-init --name " + member.name + " --peer-url " + member.peer_url + " --client-url " +
         member.client_url + " --data-dir " + member.data_dir + " --config-template " +
         (config_template.empty() ? Template(i) : config_template) + " --config-out " + Config(i) +
         " --namespace default --endpoints " + (endpoints.empty() ? Endpoints() : endpoints) + " " +
         StoreFlags() + TlsFlags() + " --etcd " + etcd + " --retry-deadline 30";
}

std::string MemberHarness::MemberInitArgsInScaleUpWindow(int i) const {
  const EtcdMemberSpec& member = cluster_->member(i);
  std::string template_text = Slurp(Template(i));
  const size_t line = template_text.find("initial-cluster: ");
  if (line == std::string::npos) {
    ADD_FAILURE() << "no initial-cluster in " << Template(i) << ":\n" << template_text;
  } else {
    template_text.replace(line, template_text.find('\n', line) - line,
                          "initial-cluster: " + member.name + "=" + member.peer_url);
  }
  const std::string lagging_template = Dir(i) + "/etcd.template-of-one.yaml";
  std::ofstream(lagging_template) << template_text;
  const std::string etcd = Dir(i) + "/etcd-grown-from-one.json";
  std::ofstream(etcd) << R"({"apiVersion":"druid.gardener.cloud/v1alpha1","kind":"Etcd",)"
                      << R"("metadata":{"name":"etcd-main","namespace":"default")" << UidField()
                      << R"(},"spec":{"replicas":)" << size_
                      << R"(},"status":{"clusterSize":1,"members":[{"name":")" << member.name
                      << R"(","status":"Ready"}]}})";
  return MemberInitArgs(i, etcd, lagging_template, member.client_url);
}

Outcome MemberHarness::MemberInitOf(int i, const std::string& etcd, const std::string& extra,
                                    const std::string& env) const {
  return Ruleplane(MemberInitArgs(i, etcd) + " " + extra, env);
}

Outcome MemberHarness::Backup(const std::string& kind) const {
  return Ruleplane("backup " + kind + " --endpoints " + Endpoints() + " " + StoreFlags() + TlsFlags());
}

std::string MemberHarness::StoreFlags() const {
  const StoreConfig& store = store_config_;
  if (store.provider == "Local") return "--backup-store " + store.container + "/" + store.prefix;
  std::string flags = "--storage-provider " + store.provider + " --store-container " + store.container +
                      " --store-prefix " + store.prefix + " --store-credentials " + store.credentials +
                      " --snapstore-temp-directory " + store.scratch_directory;
  if (!store.endpoint_override.empty()) flags += " --store-endpoint-override " + store.endpoint_override;
  return flags;
}

std::unique_ptr<BackupStore> MemberHarness::OpenStore() const {
  auto objects = OpenObjectStore(store_config_);
  EXPECT_TRUE(objects.ok()) << objects.error().message;
  return objects.ok() ? std::make_unique<BackupStore>(std::move(*objects)) : nullptr;
}

void MemberHarness::RebuildAfterQuorumLoss(int deltas, bool a_delta_goes_missing, bool lose_again) {
  ASSERT_NO_FATAL_FAILURE(Bootstrap());
  NumberedWriter writer(cluster_->ClientUrls(), "loss/", cluster_->ClientTls());
  ASSERT_TRUE(writer.WriteSome(40).ok());
  Outcome full = Backup("full");
  ASSERT_EQ(full.exit_code, 0) << full.out << full.err;

  // The store holds etcd's snapshot format (decompressed): etcdctl reads it.
  const std::unique_ptr<BackupStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string full_name = full.out.substr(0, full.out.find(' '));
  const std::string full_copy = root_->path() + "/full.db";
  ASSERT_TRUE(store->ReadSnapshotToFile(full_name, full_copy).ok());
  auto revision = SnapshotFileRevision(full_copy, std::chrono::seconds(30));
  ASSERT_TRUE(revision.ok()) << revision.error().message;
  char digits[16];
  std::snprintf(digits, sizeof digits, "%08lld", static_cast<long long>(*revision));
  EXPECT_TRUE(Contains(full_name, "-" + std::string(digits) + "-")) << full_name;

  int64_t last_backup = *revision;
  if (deltas > 0) {
    writer.Start();
    for (int delta = 0; delta < deltas; ++delta) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      Outcome taken = Backup("delta");
      ASSERT_EQ(taken.exit_code, 0) << taken.out << taken.err;
      ASSERT_TRUE(Contains(taken.out, "Incr-")) << taken.out;
    }
    writer.Stop();
    // The last delta's revision: every key acknowledged up to it must survive.
    auto listing = store->List();
    ASSERT_TRUE(listing.ok()) << listing.error().message;
    for (const StoredSnapshot& snapshot : listing->snapshots) {
      if (snapshot.kind == "Incr") last_backup = std::max(last_backup, snapshot.last_revision);
    }
    ASSERT_GT(last_backup, *revision);
  }

  // What the lost cluster held at the last backed-up revision: the rebuilt one must hold the same.
  auto original = EndpointHashKV(cluster_->member(0).client_url, last_backup, cluster_->ClientTls(),
                                 std::chrono::seconds(10));
  ASSERT_TRUE(original.ok()) << original.error().message;

  for (int i = 0; i < 3; ++i) {
    cluster_->StopMember(i);
    fs::rename(DataDir(i), DataDir(i) + ".lost-by-test");
  }

  // No member in the status is not enough: without the marker of an approved
  // quorum-loss plan the first member changes nothing and waits.
  Outcome unapproved = MemberInitOf(0, WriteEtcd(0, {}));
  EXPECT_EQ(unapproved.exit_code, 1) << unapproved.out << unapproved.err;
  EXPECT_TRUE(Contains(unapproved.out + unapproved.err, "approved quorum-loss plan")) << unapproved.out;
  EXPECT_FALSE(fs::exists(DataDir(0))) << "an aborted initialization changes nothing";

  // etcd-druid re-bootstraps: no member in the status, the marker (the
  // newest backup's revision, as MarkRebootstrap writes it from the snapshot
  // Leases); the first member restores.
  const std::string marker = std::to_string(last_backup) + ":auto";
  const std::string rule = deltas > 0 ? "first-member-restore-incrementals" : "first-member-restore";
  Outcome dry = MemberInitOf(0, WriteEtcd(0, {}, marker), "--dry-run");
  ASSERT_EQ(dry.exit_code, 0) << dry.out << dry.err;
  EXPECT_TRUE(Contains(dry.out, rule)) << dry.out;
  EXPECT_TRUE(Contains(dry.out, "run etcdctl snapshot restore")) << dry.out;
  EXPECT_EQ(Contains(dry.out, "run etcd --name m0"), deltas > 0) << "the replay etcd: " << dry.out;
  EXPECT_FALSE(fs::exists(DataDir(0))) << "a dry run changes nothing";

  if (a_delta_goes_missing) {
    ASSERT_EQ(store_config_.provider, "Local");
    // A delta in the middle is missing: the replay stops before it applies
    // anything beyond the gap, and goes on once the delta is back.
    std::vector<std::string> incrementals;
    for (const auto& entry : fs::directory_iterator(store_ + "/v2")) {
      if (entry.path().filename().string().rfind("Incr-", 0) == 0) incrementals.push_back(entry.path());
    }
    std::sort(incrementals.begin(), incrementals.end());
    ASSERT_GE(incrementals.size(), 3u);
    const std::string hidden = root_->path() + "/hidden-delta";
    fs::rename(incrementals[1], hidden);
    Outcome gap = MemberInitOf(0, WriteEtcd(0, {}, marker));
    EXPECT_EQ(gap.exit_code, 1) << gap.out << gap.err;
    EXPECT_TRUE(Contains(gap.out + gap.err, "a delta is missing")) << gap.out << gap.err;
    fs::rename(hidden, incrementals[1]);
  }
  if (deltas > 0) {
    // Killed twice in a row during the replay, a few hundred milliseconds apart.
    for (int kill = 0; kill < 2; ++kill) {
      Outcome killed =
          MemberInitOf(0, WriteEtcd(0, {}, marker), "", "RULEPLANE_FAILPOINT=local:after-delta-file");
      ASSERT_EQ(killed.exit_code, kFailPointExitCode) << killed.out << killed.err;
    }
  }
  Outcome first = MemberInitOf(0, WriteEtcd(0, {}, marker));
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_TRUE(Contains(first.out, rule)) << first.out;
  EXPECT_TRUE(Contains(Slurp(Config(0)), "initial-cluster-state: new"));
  ASSERT_TRUE(cluster_->StartMemberWithConfig(0, Config(0)).ok());
  ASSERT_TRUE(cluster_->WaitReady(0).ok()) << cluster_->member(0).log_path;

  for (int i = 1; i < 3; ++i) {
    Outcome following = MemberInitOf(i, WriteEtcd(i, StatusOfCluster(), marker));
    ASSERT_EQ(following.exit_code, 0) << following.out << following.err;
    EXPECT_TRUE(Contains(following.out, "following-member-restore")) << following.out;
    ASSERT_TRUE(cluster_->StartMemberWithConfig(i, Config(i)).ok());
    ASSERT_TRUE(cluster_->WaitReady(i).ok()) << cluster_->member(i).log_path;
  }
  ExpectHealthyCluster();
  ExpectNoKeyLost(writer, last_backup);
  auto rebuilt = EndpointHashKV(cluster_->member(0).client_url, last_backup, cluster_->ClientTls(),
                                std::chrono::seconds(10));
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.error().message;
  EXPECT_EQ(rebuilt->hash, original->hash)
      << "the rebuilt cluster holds other data at revision " << last_backup;
  if (!lose_again) return;

  // Issue 41, hazard 5: the cluster runs on and is backed up again, and then
  // every member is lost a second time. The marker still on the Etcd is the
  // first incident's: the first member waits for an approval of its own.
  ASSERT_TRUE(writer.WriteSome(10).ok());
  Outcome after = Backup("full");
  ASSERT_EQ(after.exit_code, 0) << after.out << after.err;
  for (int i = 0; i < 3; ++i) {
    cluster_->StopMember(i);
    fs::rename(DataDir(i), DataDir(i) + ".lost-again-by-test");
  }
  Outcome second = MemberInitOf(0, WriteEtcd(0, {}, marker));
  EXPECT_EQ(second.exit_code, 1) << second.out << second.err;
  EXPECT_TRUE(Contains(second.out + second.err, "approved quorum-loss plan")) << second.out << second.err;
  EXPECT_FALSE(fs::exists(DataDir(0))) << "the first incident's marker re-created the cluster again";
}

Outcome MemberHarness::History(int i, const std::string& extra) const {
  return Ruleplane("history --journal " + Journal(i) + " " + extra);
}

void MemberHarness::Bootstrap() {
  Outcome first = MemberInitOf(0, WriteEtcd(0, {}));
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_TRUE(Contains(first.out, "first-member-bootstrap")) << first.out;
  for (int i = 1; i < size_; ++i) {
    Outcome following = MemberInitOf(i, WriteEtcd(i, {{"m0", "", false}}));
    ASSERT_EQ(following.exit_code, 0) << following.out << following.err;
    EXPECT_TRUE(Contains(following.out, "following-member-bootstrap")) << following.out;
  }
  for (int i = 0; i < size_; ++i) {
    EXPECT_TRUE(Contains(Slurp(Config(i)), "initial-cluster-state: new")) << Slurp(Config(i));
    ASSERT_TRUE(cluster_->StartMemberWithConfig(i, Config(i)).ok());
  }
  for (int i = 0; i < size_; ++i) {
    Status ready = cluster_->WaitReady(i);
    ASSERT_TRUE(ready.ok()) << ready.error().message;
  }
}

void MemberHarness::ExpectHealthyCluster() const {
  EtcdClient client = cluster_->Client();
  RequestLog reads;
  auto members = client.MemberList(reads);
  ASSERT_TRUE(members.ok()) << members.error().message;
  ASSERT_EQ(members->size(), static_cast<size_t>(size_));
  for (const EtcdMember& member : *members) {
    EXPECT_FALSE(member.is_learner) << member.name;
    EXPECT_FALSE(member.name.empty()) << "a member added and never started: " << MemberIdHex(member.id);
  }
  auto status = client.MemberStatus(cluster_->member(0).client_url, reads);
  ASSERT_TRUE(status.ok()) << status.error().message;
  std::optional<uint32_t> hash;
  for (int i = 0; i < size_; ++i) {
    // A member catching up answers with an older revision for a moment.
    auto result = HashAt(i, status->revision);
    ASSERT_TRUE(result.ok()) << cluster_->member(i).name << ": " << result.error().message;
    if (hash) {
      EXPECT_EQ(*result, *hash) << cluster_->member(i).name << " disagrees at revision " << status->revision;
    }
    hash = *result;
  }
}

void MemberHarness::ExpectNoKeyLost(const NumberedWriter& writer, int64_t up_to_revision) const {
  EtcdClient client = cluster_->Client();
  std::vector<std::string> missing =
      MissingKeys(client, writer, up_to_revision > 0 ? up_to_revision : INT64_MAX);
  EXPECT_TRUE(missing.empty()) << missing.size() << " acknowledged keys lost, e.g. " << missing.front();
  EXPECT_GT(writer.acknowledged().size(), 20u) << "the writer wrote too little to show a loss";
}

Result<uintmax_t> MemberHarness::CorruptDatabase(int i) const {
  const std::string db = DataDir(i) + "/member/snap/db";
  std::error_code error;
  const uintmax_t size = fs::file_size(db, error);
  if (error) return Error{ErrorCode::kIo, "cannot read the size of " + db + ": " + error.message(), {}};
  fs::resize_file(db, size / 2, error);
  if (error) return Error{ErrorCode::kIo, "cannot truncate " + db + ": " + error.message(), {}};
  std::fstream file(db, std::ios::in | std::ios::out | std::ios::binary);
  const std::string garbage(8192, '\xff');
  if (!file.write(garbage.data(), static_cast<std::streamsize>(garbage.size())).flush())
    return Error{ErrorCode::kIo, "cannot overwrite " + db, {}};
  return size / 2;
}

std::vector<std::string> MemberHarness::Beside(int i, const std::string& infix) const {
  std::vector<std::string> found;
  const std::string prefix = fs::path(DataDir(i)).filename().string() + infix;
  for (const auto& entry : fs::directory_iterator(Dir(i))) {
    if (entry.path().filename().string().rfind(prefix, 0) == 0) found.push_back(entry.path().string());
  }
  return found;
}

Result<MemberView> MemberHarness::ViewOf(int i) const {
  return MemberViewAt(cluster_->member(i).client_url, cluster_->ClientTls());
}

Result<uint32_t> MemberHarness::HashAt(int i, int64_t revision, int attempts) const {
  return HashKvAt(cluster_->member(i).client_url, revision, attempts, cluster_->ClientTls());
}

}  // namespace ruleplane::testing
