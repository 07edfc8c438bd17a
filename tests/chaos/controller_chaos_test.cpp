// The Kubernetes-level fault campaign of issue 23. The e2e world
// (tests/support/e2e_world.h: a real kube-apiserver with an audit log and
// kube-controller-manager, the test kubelet running each member Pod as real
// member-init, etcd and member-agent) with three controller replicas, each as
// its own user bound to deploy/rbac.yaml's Role, and a fourth with --dry-run;
// a 3-member Etcd created from nothing and a writer that records every
// acknowledged put. From a printed seed, a sequence of faults the system must
// heal from on its own, without an approval: a replica SIGKILLed (and
// restarted), the Lease holder SIGSTOPped past its Lease (it must exit when
// continued; restarted), a member's etcd, member-agent or member-init
// SIGKILLed (member-init several times in a row while its Pod comes back), a
// member Pod deleted, the Etcd's status cleared, the dry-run replica
// restarted, a member's Lease renewed for 30 s as if its member agent ran on
// a node whose clock is 5 minutes behind (the agent SIGSTOPped, the test
// renewing in its place; from the audit log: nothing disruptive meanwhile; a
// controller that read the written renewTime would find the member's Lease
// expired and, past the grace periods, delete its Pod), a stranger (any Pod in
// the namespace) asking a member agent's API for a dozen snapshots (at most
// one of each kind is taken, and a full snapshot stored before is collected
// only for a newer one of its own schedule period), the members' ServiceAccount token used to write the
// controllers' Lease, another Etcd's snapshot Lease and the StatefulSet's
// scale (each refused; the audit log shows no write by a member's token
// outside its own Etcd's Leases and status). After each fault the cluster must settle (three Ready
// members in the status, three started voters in etcd's own member list, the writer acknowledged again) and
// then show every acknowledged key, one cluster ID and one member list on every member, HashKV equal; and the
// API server's audit log must show that every write by a controller replica (not Events, not the controllers'
// Lease itself) came from the user holding the Lease at the time (the holder after each Lease write, read
// from its body), and that the dry-run replica wrote nothing but Events. The last step loses the quorum (two
// members' Pods deleted and their data wiped): from the audit log, no replica writes anything disruptive (the
// StatefulSet, a Pod deletion, the Etcd's re-bootstrap annotation) until the admin approves the plan's
// digest; approved, the cluster is re-bootstrapped from the backup with every acknowledged key up to the
// stated data-loss bound.
//
// The kinds come in a seed-shuffled order, each once per round, so that a
// short sequence covers every kind. A failing seed reproduces the same
// sequence of faults (what the system does in between depends on timing):
//
//   RULEPLANE_CHAOS_SEEDS=7 RULEPLANE_CHAOS_FAULTS=16 build/release/ruleplane_chaos_tests
//       --gtest_filter='ControllerChaos.*'
//
// Without RULEPLANE_CHAOS_SEEDS the fixed CI seeds run; `scripts/chaos.sh
// --kubernetes` runs a longer campaign.
#include <signal.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "adapters/kubernetes/manifests.h"
#include "adapters/local/backup_store.h"
#include "engine/common/json_value.h"
#include "platform/base64.h"
#include "platform/http_client.h"
#include "platform/process.h"
#include "tests/support/audit_log.h"
#include "tests/support/chaos_campaign.h"
#include "tests/support/e2e_world.h"
#include "tests/support/etcd_cluster.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// The longest time the writer may go without an acknowledged put: one
// member away at a time never costs the quorum, so only an election (1 s)
// and a client's failover should show.
constexpr milliseconds kOutageBound = seconds(30);
constexpr seconds kSettle = seconds(180);
// E2eWorld::StartController's Lease duration; a pause lasts longer than it.
constexpr seconds kLeaseDuration = seconds(6);
constexpr seconds kPause = kLeaseDuration + seconds(3);

// Two seeds with one round of every kind and the quorum loss each: about 4 minutes on 2 shared cores.
const std::vector<uint64_t> kCiSeeds = {7, 11};

const std::string kControllerLease = "ruleplane-controller";
// As the e2e quorum-loss scenario: a member NotReady or Unknown that long counts as lost.
const std::vector<std::string> kGracePeriods = {"--param", "notReadyGracePeriod=10s", "--param",
                                                "unknownGracePeriod=5s"};
const std::string kDryRunUser = "controller-dry";

enum Kind {
  kKillController,  // SIGKILL of a replica (leader or standby), restarted after 0-3 s
  kPauseLeader,     // SIGSTOP of the Lease holder past its Lease, SIGCONT: it must exit; restarted
  kKillEtcd,        // SIGKILL of a member's etcd (the kubelet restarts it)
  kKillMemberAgent,
  kKillMemberInit,  // a member Pod deleted, its member-init SIGKILLed 1-3 times in a row as it comes back
  kDeletePod,
  kClearStatus,        // the Etcd's status cleared by the admin (status subresource)
  kRestartDryRun,      // the --dry-run replica stopped and started again
  kSkewLease,          // a member's Lease renewed for kSkewFor as from a node kSkewBehind behind
  kStrangerCallsApi,   // a Pod in the namespace POSTs a dozen snapshot requests to a member agent
  kMemberTokenWrites,  // the members' ServiceAccount token tries what only the controller may write
  kKinds
};
constexpr int kCiFaults = kKinds;
constexpr seconds kSkewFor = seconds(30);  // past unknownGracePeriod + notReadyGracePeriod
constexpr std::chrono::minutes kSkewBehind{5};
constexpr std::array<const char*, kKinds> kKindNames = {
    "kill-controller",  "pause-leader",       "kill-etcd",          "kill-member-agent",
    "kill-member-init", "delete-pod",         "clear-status",       "restart-dry-run",
    "skew-lease",       "stranger-calls-api", "member-token-writes"};
// The stranger's snapshot requests: a third each delta, full and final full.
constexpr int kStrangerRequests = 12;
const std::string kMembersUser = "system:serviceaccount:default:etcd-main";
const std::string kOtherEtcdLease = "etcd-other-full-snap";

struct Totals {
  int sequences = 0;
  std::vector<uint64_t> failed_seeds;
  std::array<int, kKinds> faults{};
  int member_init_kills = 0;
  int quorum_losses = 0;     // the last step of a sequence, recovered only after an approval
  int unexpected_exits = 0;  // replicas that ended without being killed or paused
  int leadership_changes = 0;
  int checked_writes = 0;                  // controller writes checked against the Lease holder
  int stranger_requests_refused = 0;       // 429: past the one request of its kind per interval
  int fulls_replaced_in_their_period = 0;  // by a newer full of the same schedule period (LimitBased)
  int member_token_writes_refused = 0;
  int64_t acknowledged = 0;
  int64_t lost = 0;
  int split_clusters = 0;
  int audit_violations = 0;
  milliseconds longest_outage{0};
  uint64_t longest_outage_seed = 0;
  milliseconds longest_settle{0};
};

bool IsWrite(const std::string& verb) {
  return verb == "create" || verb == "update" || verb == "patch" || verb == "delete" ||
         verb == "deletecollection";
}

// What the audit log says about the controller replicas' writes.
struct AuditFindings {
  std::vector<std::string> violations;
  int checked_writes = 0;  // by a controller-* user, not Events, not the controllers' Lease
  int leadership_changes = 0;
  int disruptive_after_approval = 0;  // writes of the approved recovery (what the window check looks for)
  int member_writes = 0;              // by the members' ServiceAccount, each to its own Etcd's objects
};

// What the members' Role allows them to write: their Etcd's member and
// snapshot Leases, and its status.
bool IsMembersOwnObject(const AuditEvent& event) {
  const std::string etcd = E2eWorld::kEtcd;
  if (event.resource == "leases") return event.name.rfind(etcd + "-", 0) == 0;
  return event.resource == "etcds" && event.subresource == "status" && event.name == etcd;
}

// From the quorum loss to its approval (server times, RFC 3339 with six
// fractional digits, so that text order is time order); empty: none yet.
// `calm`: spans in which nothing justified a disruptive write (a skewed Lease).
struct ApprovalWindow {
  std::string quorum_lost, approved;
  std::vector<std::pair<std::string, std::string>> calm;
};

// A write of the quorum-loss recovery: the StatefulSet's scale (to 0 and
// back), a Pod deleted, the Etcd itself (the re-bootstrap annotation). Not
// the StatefulSet's spec applied again (a new leader does that after the
// status was cleared, observedGeneration with it) nor the Etcd's status.
bool IsDisruptive(const AuditEvent& event) {
  return (event.resource == "statefulsets" && event.subresource == "scale") ||
         (event.resource == "pods" && event.verb == "delete") ||
         (event.resource == "etcds" && event.subresource.empty());
}

// The holder after each successful write of the controllers' Lease is the
// writer when the body names a holder (or there is no body: a create),
// nobody when it gives the Lease up (empty holderIdentity). Every other
// successful write by a controller-* user must come from the holder of that
// moment; the dry-run user may write Events only; within `window`, no
// controller writes anything disruptive before the approval. Events are
// ordered by the time the server received them. A replica is known by its
// user: a restarted one is the same user as its killed predecessor.
AuditFindings CheckAuditLog(const std::string& path, const ApprovalWindow& window) {
  std::vector<AuditEvent> events = ReadAuditLog(path);
  std::stable_sort(events.begin(), events.end(),
                   [](const AuditEvent& a, const AuditEvent& b) { return a.received < b.received; });
  AuditFindings findings;
  std::string holder;
  for (const AuditEvent& event : events) {
    if (!event.Succeeded() || !IsWrite(event.verb)) continue;
    if (event.user == kMembersUser) {
      ++findings.member_writes;
      if (!IsMembersOwnObject(event))
        findings.violations.push_back("the members' token: " + event.Describe());
      continue;
    }
    const bool by_controller = event.user.rfind("controller-", 0) == 0;
    if (event.resource == "leases" && event.name == kControllerLease && event.namespace_name == "default") {
      if (event.user == kDryRunUser)
        findings.violations.push_back("the dry-run replica: " + event.Describe());
      // Without a body (a create): the writer, who only writes the Lease to take or keep it.
      const std::string next = event.lease_holder.value_or(event.user).empty() ? "" : event.user;
      if (!next.empty() && next != holder) ++findings.leadership_changes;
      holder = next;
      continue;
    }
    if (!by_controller || event.resource == "events") continue;
    if (event.user == kDryRunUser) {
      findings.violations.push_back("the dry-run replica: " + event.Describe());
      continue;
    }
    ++findings.checked_writes;
    for (const auto& [from, to] : window.calm) {
      if (IsDisruptive(event) && event.received >= from && event.received <= to)
        findings.violations.push_back(event.Describe() +
                                      ": disruptive while a member's Lease was written skewed");
    }
    if (!window.quorum_lost.empty() && event.received >= window.quorum_lost && IsDisruptive(event)) {
      if (window.approved.empty() || event.received < window.approved)
        findings.violations.push_back(event.Describe() + ": disruptive before the approval");
      else
        ++findings.disruptive_after_approval;
    }
    if (event.user != holder)
      findings.violations.push_back(event.Describe() + " while " + (holder.empty() ? "nobody" : holder) +
                                    " held the Lease");
  }
  return findings;
}

struct Replica {
  std::string name;  // "a", "b", "c", "dry"
  std::string user;
  std::vector<std::string> flags;
  ChildProcess process;
};

// One seed: a fresh world, a sequence of faults, each followed by settling and the checks.
class Sequence {
 public:
  Sequence(uint64_t seed, int faults, Totals& totals) : seed_(seed), faults_(faults), totals_(totals) {}

  void Run() {
    std::cout << "chaos: seed " << seed_ << ", " << faults_
              << " Kubernetes-level faults (RULEPLANE_CHAOS_SEEDS=" << seed_
              << " RULEPLANE_CHAOS_FAULTS=" << faults_ << " --gtest_filter='ControllerChaos.*' to reproduce)"
              << std::endl;
    dir_ = std::make_unique<TempDir>("kchaos-" + std::to_string(seed_));
    chaos_log_.Open(dir_->path() + "/chaos.log");
    auto world = E2eWorld::Start(
        dir_->path(), {.controller_users = {"controller-a", "controller-b", "controller-c", kDryRunUser},
                       .audit_log = true});
    ASSERT_TRUE(world.ok()) << world.error().message;
    world_ = std::move(*world);
    for (const std::string name : {"a", "b", "c"})
      replicas_.push_back(Replica{name, "controller-" + name, kGracePeriods, {}});
    replicas_.push_back(Replica{"dry", kDryRunUser, {"--dry-run"}, {}});
    for (Replica& replica : replicas_) StartReplica(replica);
    ASSERT_TRUE(world_->CreateEtcd(3).ok());
    if (!Eventually([&] { return world_->HealthyWith(3); }, seconds(180), seconds(1)))
      return Fail("the Etcd created from nothing never became healthy\n" + Describe());
    Note("the Etcd is healthy with 3 members");
    writer_ = std::make_unique<NumberedWriter>(world_->ClientUrls(3), "/kchaos/");
    writer_->Start(milliseconds(20));

    // Each kind once per round, in an order drawn from the seed.
    std::vector<Kind> order;
    for (int fault = 0; fault < faults_ && !failed_; ++fault) {
      std::mt19937_64 random(seed_ * 1000003 + static_cast<uint64_t>(fault));
      if (order.empty()) {
        std::mt19937_64 shuffle(seed_ * 7919 + static_cast<uint64_t>(fault));
        for (int kind = kKinds - 1; kind >= 0; --kind) order.push_back(static_cast<Kind>(kind));
        std::shuffle(order.begin(), order.end(), shuffle);
      }
      const Kind kind = order.back();
      order.pop_back();
      ++totals_.faults[kind];
      Inject(kind, random);
      if (!failed_ && Settle()) Check();
    }
    if (!failed_ && world_ && writer_) QuorumLossAwaitsApproval();
    Finish();
  }

  bool failed() const { return failed_; }
  std::string root() const { return dir_ ? dir_->path() : ""; }
  void KeepFiles() {
    if (dir_) dir_->Keep();
  }

 private:
  void Note(const std::string& line) { chaos_log_.Note(line); }

  void Fail(const std::string& what) {
    failed_ = true;
    chaos_log_.Fail(what, root());
  }

  std::string Describe() {
    std::vector<std::string> names;
    for (const Replica& replica : replicas_) names.push_back(replica.name);
    return world_->Describe(names);
  }

  static std::string Pod(int member) { return std::string(E2eWorld::kEtcd) + "-" + std::to_string(member); }

  void StartReplica(Replica& replica) {
    auto started = world_->StartController(replica.name, replica.user, replica.flags);
    if (!started.ok())
      return Fail("controller " + replica.name + " did not start: " + started.error().message);
    replica.process = std::move(*started);
    Note("controller " + replica.name + " started (pid " + std::to_string(replica.process.pid()) + ")");
  }

  // The replica whose identity (<host>_<pid>) holds the controllers' Lease; -1 when none of them.
  int LeaseHolder() {
    RequestLog log;
    auto lease =
        world_->admin().Get({"coordination.k8s.io/v1", "leases", "default", kControllerLease, ""}, log);
    const std::string holder = lease.ok() ? TextAt(*lease, {"spec", "holderIdentity"}) : "";
    for (size_t i = 0; i < replicas_.size(); ++i) {
      const std::string suffix = "_" + std::to_string(replicas_[i].process.pid());
      if (replicas_[i].process.pid() > 0 && holder.size() > suffix.size() &&
          holder.compare(holder.size() - suffix.size(), suffix.size(), suffix) == 0)
        return static_cast<int>(i);
    }
    return -1;
  }

  // Whether process `pid` has ended (a zombie not yet reaped, or gone).
  static bool Exited(int pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return true;
    const size_t name_end = line.rfind(')');
    return name_end == std::string::npos || name_end + 2 >= line.size() || line[name_end + 2] == 'Z';
  }

  // The pid of a member Pod's container, waited for up to `timeout`; 0 when it does not run.
  int PidOf(int member, const std::string& container, seconds timeout = seconds(30)) {
    int pid = 0;
    Eventually([&] { return (pid = world_->agent().Pid(Pod(member), container)) != 0; }, timeout,
               milliseconds(20));
    return pid;
  }

  // A member Pod deleted, until its etcd has stopped (the kubelet's job);
  // false (and failed) when it cannot be.
  bool DeletePod(int member) {
    RequestLog log;
    const int etcd = world_->agent().Pid(Pod(member), "etcd");
    if (auto deleted =
            world_->admin().Delete({"v1", "pods", "default", Pod(member), ""}, {}, std::nullopt, log);
        !deleted.ok()) {
      Fail("cannot delete " + Pod(member) + ": " + deleted.error().message);
      return false;
    }
    if (!Eventually([&] { return world_->agent().Pid(Pod(member), "etcd") != etcd; }, seconds(30))) {
      Fail(Pod(member) + "'s etcd still runs 30 s after its Pod was deleted");
      return false;
    }
    return true;
  }

  void Inject(Kind kind, std::mt19937_64& random) {
    auto pick = [&](int count) { return std::uniform_int_distribution<int>(0, count - 1)(random); };
    auto between = [&](int low, int high) {
      return milliseconds(std::uniform_int_distribution<int>(low, high)(random));
    };
    RequestLog log;
    switch (kind) {
      case kKillController: {
        Replica& replica = replicas_[pick(3)];
        const bool leads = LeaseHolder() >= 0 && &replicas_[LeaseHolder()] == &replica;
        const milliseconds down = between(0, 3000);
        Note("fault kill-controller: SIGKILL controller " + replica.name + " (pid " +
             std::to_string(replica.process.pid()) + (leads ? ", the Lease holder" : ", a standby") +
             "), restarted after " + std::to_string(down.count()) + " ms");
        replica.process.Kill(SIGKILL);
        replica.process.Stop();
        std::this_thread::sleep_for(down);
        return StartReplica(replica);
      }
      case kPauseLeader: {
        int holder = -1;
        Eventually([&] { return (holder = LeaseHolder()) >= 0 && holder < 3; }, seconds(30));
        if (holder < 0 || holder >= 3)
          return Fail("no acting replica holds the Lease to be paused\n" + Describe());
        Replica& replica = replicas_[holder];
        Note("fault pause-leader: SIGSTOP controller " + replica.name + " (pid " +
             std::to_string(replica.process.pid()) + ", the Lease holder) for " +
             std::to_string(kPause.count()) + " s, then SIGCONT");
        replica.process.Kill(SIGSTOP);
        std::this_thread::sleep_for(kPause);
        replica.process.Kill(SIGCONT);
        const auto continued = std::chrono::steady_clock::now();
        if (!Eventually([&] { return !replica.process.running(); }, seconds(15), milliseconds(50)))
          return Fail("controller " + replica.name +
                      ", paused past its Lease, still runs 15 s after SIGCONT\n" +
                      TailOf(world_->ControllerLog(replica.name)));
        const int code = replica.process.Stop();
        Note("controller " + replica.name + " exited with " + std::to_string(code) + " " +
             std::to_string(
                 std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - continued)
                     .count()) +
             " ms after SIGCONT; restarted");
        if (code != 1) Fail("the deposed controller exited with " + std::to_string(code) + ", not 1");
        return StartReplica(replica);
      }
      case kKillEtcd:
      case kKillMemberAgent: {
        const int member = pick(3);
        const std::string container = kind == kKillEtcd ? "etcd" : "member-agent";
        const int pid = PidOf(member, container);
        Note("fault " + std::string(kKindNames[kind]) + ": SIGKILL " + Pod(member) + "/" + container +
             " (pid " + std::to_string(pid) + ")");
        if (pid == 0) return Fail(Pod(member) + "/" + container + " does not run\n" + Describe());
        ::kill(pid, SIGKILL);
        return;
      }
      case kKillMemberInit: {
        const int member = pick(3);
        const int kills = 1 + pick(3);
        Note("fault kill-member-init: " + Pod(member) + " deleted, its member-init SIGKILLed " +
             std::to_string(kills) + " time(s) as it comes back");
        if (!DeletePod(member)) return;
        int last = 0;
        for (int kill = 0; kill < kills; ++kill) {
          int pid = 0;
          const bool started = Eventually(
              [&] {
                pid = world_->agent().Pid(Pod(member), "member-init");
                return (pid != 0 && pid != last) || world_->agent().Pid(Pod(member), "etcd") != 0;
              },
              seconds(60), milliseconds(10));
          if (!started || pid == 0 || pid == last) {
            Note("member-init of " + Pod(member) + " completed before the next kill");
            break;
          }
          std::this_thread::sleep_for(between(0, 300));  // member-init takes about a second
          // A member-init that has ended keeps its pid until the kubelet reaps it: no kill lands then.
          if (world_->agent().Pid(Pod(member), "member-init") != pid || Exited(pid)) {
            Note("member-init (pid " + std::to_string(pid) + ") completed before its kill");
            break;
          }
          ::kill(pid, SIGKILL);
          ++totals_.member_init_kills;
          Note("SIGKILL " + Pod(member) + "/member-init (pid " + std::to_string(pid) + ")");
          last = pid;
        }
        return;
      }
      case kDeletePod: {
        const int member = pick(3);
        Note("fault delete-pod: " + Pod(member));
        DeletePod(member);
        return;
      }
      case kClearStatus: {
        Note("fault clear-status: the Etcd's status patched to null by the admin");
        KubeResource status = E2eWorld::kEtcdResource;
        status.subresource = "status";
        auto patched = world_->admin().MergePatch(
            status, Value::MakeMap({{Value::String("status"), Value::Null()}}), log);
        if (!patched.ok()) return Fail("cannot clear the status: " + patched.error().message);
        if (ValueAt(*patched, {"status", "members"}) != nullptr)
          return Fail("the status still lists members after it was cleared: " + FormatJson(*patched));
        return;
      }
      case kRestartDryRun: {
        Replica& replica = replicas_[3];
        Note("fault restart-dry-run: controller dry (pid " + std::to_string(replica.process.pid()) +
             ") stopped (SIGTERM) and started again");
        replica.process.Stop();
        return StartReplica(replica);
      }
      case kSkewLease: {
        const int member = pick(3);
        const int agent = PidOf(member, "member-agent");
        if (agent == 0) return Fail(Pod(member) + "/member-agent does not run\n" + Describe());
        Note("fault skew-lease: " + Pod(member) + "/member-agent (pid " + std::to_string(agent) +
             ") SIGSTOPped, its Lease renewed every 500 ms for " + std::to_string(kSkewFor.count()) +
             " s as from a node " + std::to_string(kSkewBehind.count()) + " min behind, then SIGCONT");
        const auto begin = std::chrono::system_clock::now();
        ::kill(agent, SIGSTOP);
        const KubeResource lease{"coordination.k8s.io/v1", "leases", "default", Pod(member), ""};
        Status renewed;
        while (renewed.ok() && std::chrono::system_clock::now() - begin < kSkewFor) {
          const std::string written = FormatMicroTime(std::chrono::system_clock::now() - kSkewBehind);
          auto patched = world_->admin().MergePatch(
              lease,
              Value::MakeMap({{Value::String("spec"),
                               Value::MakeMap({{Value::String("renewTime"), Value::String(written)}})}}),
              log);
          if (!patched.ok()) renewed = patched.error();
          std::this_thread::sleep_for(milliseconds(500));
        }
        ::kill(agent, SIGCONT);
        if (!renewed.ok())
          return Fail("cannot write " + Pod(member) + "'s Lease: " + renewed.error().message);
        // Until the member agent's next renewal (its heartbeat) the Lease still reads skewed.
        window_.calm.emplace_back(FormatMicroTime(begin),
                                  FormatMicroTime(std::chrono::system_clock::now() + seconds(5)));
        return;
      }
      case kStrangerCallsApi:
        return StrangerCallsApi(pick(3));
      case kMemberTokenWrites:
        return MemberTokenWrites();
      case kKinds:
        return;
    }
  }

  // The full snapshots in the store (the Local store on the node's hostPath), by name, with their creation
  // times.
  Result<std::map<std::string, int64_t>> FullSnapshots() const {
    auto listing =
        BackupStore(dir_->path() + "/node/hostpath/etc/gardener/local-backupbuckets/e2e-backups/etcd-main")
            .List();
    if (!listing.ok()) return listing.error();
    std::map<std::string, int64_t> fulls;
    for (const StoredSnapshot& snapshot : listing->snapshots)
      if (snapshot.kind == "Full") fulls[snapshot.name] = snapshot.created_on;
    return fulls;
  }

  // The revision the leader's agent last wrote on the delta snapshot Lease; 0 when none.
  int64_t DeltaLeaseRevision() {
    RequestLog log;
    auto lease = world_->admin().Get(
        {"coordination.k8s.io/v1", "leases", "default", std::string(E2eWorld::kEtcd) + "-delta-snap", ""},
        log);
    const std::string holder = lease.ok() ? TextAt(*lease, {"spec", "holderIdentity"}) : "";
    return holder.empty() ? int64_t{0} : std::strtoll(holder.c_str(), nullptr, 10);
  }

  // Issue 41, hazard 2: without TLS the agents' API takes requests from any
  // caller. A dozen POSTs of full, final full and delta snapshots: the agents
  // take at most one of each kind (429 for the rest), and the garbage
  // collection of the two backup rounds after them (each round ends with it)
  // deletes no full snapshot the store had before. Before, each was taken
  // and LimitBased collection kept only the newest 7 full snapshots: the
  // older history was gone within a minute.
  void StrangerCallsApi(int member) {
    auto before = FullSnapshots();
    if (!before.ok()) return Fail("cannot list the backup store: " + before.error().message);
    const std::string at = "http://" + world_->agent().PodIP(Pod(member)) + ":8080";
    Note("fault stranger-calls-api: " + std::to_string(kStrangerRequests) + " snapshot requests POSTed to " +
         Pod(member) + "'s agent (" + at + "), " + std::to_string(before->size()) +
         " full snapshot(s) stored");
    HttpClient http;
    std::map<std::string, int> taken;
    std::map<int, int> answers;
    for (int request = 0; request < kStrangerRequests; ++request) {
      const char* path = request % 3 == 0   ? "/snapshot/delta"
                         : request % 3 == 1 ? "/snapshot/full"
                                            : "/snapshot/full?final=true";
      auto response = http.Send("POST", at + path, "", seconds(60));
      const int status = response.ok() ? response->status : 0;
      ++answers[status];
      if (status == 200) ++taken[request % 3 == 0 ? "delta" : "full"];
      if (status == 429) ++totals_.stranger_requests_refused;
    }
    std::string summary;
    for (const auto& [status, count] : answers)
      summary += (summary.empty() ? "" : ", ") + std::to_string(count) + " x " + std::to_string(status);
    Note("answers: " + summary);
    for (const auto& [kind, count] : taken)
      if (count > 1)
        Fail("one caller got " + std::to_string(count) + " " + kind + " snapshots taken at once");
    // Each backup round of the leader's agent ends in its garbage collection,
    // and the rounds run one after the other: once the delta Lease has moved
    // three times, two rounds' collections after the requests are done.
    int64_t seen = DeltaLeaseRevision();
    int rounds = 0;
    Eventually(
        [&] {
          const int64_t now = DeltaLeaseRevision();
          if (now != seen) {
            ++rounds;
            seen = now;
          }
          return rounds >= 3;
        },
        seconds(90), milliseconds(200));
    if (rounds < 3)
      return Fail("the leader's agent took no three delta snapshots within 90 s\n" + Describe());
    auto after = FullSnapshots();
    if (!after.ok()) return Fail("cannot list the backup store: " + after.error().message);
    // LimitBased with the members' default hourly schedule keeps the newest
    // full of each period: a full stored before may give way only to a newer
    // one of its own clock hour, never because of the stranger's to one of a
    // later period.
    for (const auto& [name, created] : *before) {
      if (after->count(name) != 0) continue;
      const bool replaced_in_its_period = std::any_of(after->begin(), after->end(), [&](const auto& kept) {
        return kept.second > created && kept.second / 3600 == created / 3600;
      });
      if (replaced_in_its_period) {
        ++totals_.fulls_replaced_in_their_period;
      } else {
        Fail("the garbage collection after a stranger's requests deleted " + name +
             ", and no newer full snapshot of its hour is stored");
      }
    }
  }

  // Issue 41, hazard 4: what the members' ServiceAccount token can write. The
  // controllers' leader-election Lease, another Etcd's snapshot Lease (whose
  // revision an approver's data-loss bound reads) and the StatefulSet's scale
  // must each be refused (403); CheckAuditLog finds any write by the token
  // outside its own Etcd's Leases and status.
  void MemberTokenWrites() {
    RequestLog log;
    std::string token;
    auto account = world_->admin().Get({"v1", "serviceaccounts", "default", E2eWorld::kEtcd, ""}, log);
    const Value* secrets = account.ok() ? ValueAt(*account, {"secrets"}) : nullptr;
    for (const Value& reference :
         secrets != nullptr && secrets->is_list() ? secrets->list_value() : Value::List{}) {
      auto secret = world_->admin().Get({"v1", "secrets", "default", TextAt(reference, {"name"}), ""}, log);
      if (!secret.ok() || TextAt(*secret, {"type"}) != "kubernetes.io/service-account-token") continue;
      token = Base64Decode(TextAt(*secret, {"data", "token"})).value_or("");
    }
    if (token.empty())
      return Fail("no token Secret for the members' ServiceAccount " + std::string(E2eWorld::kEtcd));
    KubeConfig config = world_->admin().config();
    config.tls.cert_file = config.tls.key_file = config.tls.cert_pem = config.tls.key_pem = "";
    config.token = token;
    KubeClient members(config);
    Note("fault member-token-writes: the members' token writes the controllers' Lease, " + kOtherEtcdLease +
         " and the StatefulSet's scale");
    const KubeResource other_lease{"coordination.k8s.io/v1", "leases", "default", kOtherEtcdLease, ""};
    auto other = ParseJson(R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":")" +
                           kOtherEtcdLease + R"("},"spec":{"holderIdentity":"1000"}})");
    if (!other.ok()) return Fail(other.error().message);
    if (auto created = ApplyManifests(world_->admin(), {*other}, "default", log); !created.ok())
      return Fail("cannot create " + kOtherEtcdLease + ": " + created.error().message);
    const Value holder = Value::MakeMap(
        {{Value::String("spec"), Value::MakeMap({{Value::String("holderIdentity"), Value::String("1")}})}});
    const Value replicas = Value::MakeMap(
        {{Value::String("spec"), Value::MakeMap({{Value::String("replicas"), Value::Int(1)}})}});
    const std::pair<KubeResource, Value> writes[] = {
        {{"coordination.k8s.io/v1", "leases", "default", kControllerLease, ""}, holder},
        {other_lease, holder},
        {{"apps/v1", "statefulsets", "default", E2eWorld::kEtcd, "scale"}, replicas}};
    for (const auto& [object, patch] : writes) {
      auto written = members.MergePatch(object, patch, log);
      if (written.ok()) {
        Fail("the members' token wrote " + object.plural + " " + object.name + ": " + FormatJson(*written));
      } else if (written.error().message.find("HTTP 403") == std::string::npos) {
        Fail("the members' token's write of " + object.name +
             " failed otherwise than refused: " + written.error().message);
      } else {
        ++totals_.member_token_writes_refused;
      }
    }
  }

  // Until three members are Ready in the status, etcd itself lists three
  // started voters alike on every member, and the writer is acknowledged
  // again; a replica that ended on its own meanwhile is noted and restarted.
  bool Settle() {
    const auto begin = std::chrono::steady_clock::now();
    const size_t acknowledged_before = writer_->acknowledged().size();
    std::string why;
    while (std::chrono::steady_clock::now() - begin < kSettle) {
      for (Replica& replica : replicas_) {
        if (replica.process.running()) continue;
        const int code = replica.process.Stop();
        ++totals_.unexpected_exits;
        Note("controller " + replica.name + " ended on its own (exit " + std::to_string(code) +
             "): " + TailOf(world_->ControllerLog(replica.name), 300));
        StartReplica(replica);
      }
      why = WhyUnsettled(acknowledged_before);
      if (why.empty()) {
        const auto took = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - begin);
        totals_.longest_settle = std::max(totals_.longest_settle, took);
        Note("settled in " + std::to_string(took.count()) + " ms");
        return true;
      }
      std::this_thread::sleep_for(milliseconds(500));
    }
    Fail("the cluster did not settle within " + std::to_string(kSettle.count()) + " s: " + why + "\n" +
         Describe());
    return false;
  }

  std::string WhyUnsettled(size_t acknowledged_before) {
    for (int member = 0; member < 3; ++member)
      for (const char* container : {"etcd", "member-agent"})
        if (world_->agent().Pid(Pod(member), container) == 0)
          return Pod(member) + "/" + container + " does not run";
    if (!world_->HealthyWith(3)) return "the Etcd's status does not show 3 Ready members";
    std::optional<std::vector<std::string>> first;
    for (const std::string& url : world_->ClientUrls(3)) {
      auto view = MemberViewAt(url);
      if (!view.ok()) return url + " does not answer: " + view.error().message;
      if (view->members.size() != 3)
        return url + " lists " + std::to_string(view->members.size()) + " members";
      for (const std::string& member : view->members)
        if (member.find("learner") != std::string::npos || member.find("(unstarted)") != std::string::npos)
          return url + " lists " + member;
      if (first && view->members != *first) return url + " lists other members than the first";
      if (!first) first = view->members;
    }
    if (writer_->acknowledged().size() <= acknowledged_before)
      return "the writer has not been acknowledged since";
    return "";
  }

  // Every acknowledged key, one cluster ID and member list, HashKV equal, the audit log clean.
  void Check() {
    const auto urls = world_->ClientUrls(3);
    std::set<uint64_t> cluster_ids;
    std::set<std::vector<std::string>> member_lists;
    for (const std::string& url : urls) {
      auto view = MemberViewAt(url);
      if (!view.ok()) return Fail(url + " does not answer: " + view.error().message);
      cluster_ids.insert(view->cluster_id);
      member_lists.insert(view->members);
    }
    if (cluster_ids.size() > 1) {
      ++split_clusters_;
      Fail(std::to_string(cluster_ids.size()) + " cluster IDs answer");
    }
    if (member_lists.size() > 1) Fail("the members disagree on the member list");
    EtcdClient client(EtcdClientConfig{urls, {}, seconds(5)});
    const std::vector<std::string> missing = MissingKeys(client, *writer_);
    lost_ = std::max(lost_, static_cast<int64_t>(missing.size()));
    if (!missing.empty())
      Fail(std::to_string(missing.size()) + " acknowledged keys lost, e.g. " + missing.front() + "\n" +
           Describe());
    if (Status agree = MembersAgree(urls); !agree.ok()) Fail(agree.error().message);
    CheckAudit();
    Note("checked: " + std::to_string(writer_->acknowledged().size()) + " acknowledged writes, " +
         std::to_string(missing.size()) + " lost, " + std::to_string(cluster_ids.size()) +
         " cluster ID, HashKV equal, " + std::to_string(audit_.checked_writes) +
         " controller writes checked against the Lease holder, " + std::to_string(audit_.member_writes) +
         " by the members' token to their own objects, " + std::to_string(audit_.violations.size()) +
         " audit violations");
  }

  void CheckAudit() {
    audit_ = CheckAuditLog(world_->kube().audit_log_path(), window_);
    for (const std::string& violation : audit_.violations) {
      if (!reported_.insert(violation).second) continue;
      Fail("audit: " + violation);
    }
  }

  // The last step: quorum lost (two of three members' Pods deleted and
  // their data directories wiped, after a delta backup holds every
  // acknowledged write). Nothing disruptive may happen until the approval
  // naming the plan's digest (read from the audit log afterwards); approved,
  // the cluster is re-bootstrapped from the backup and every key up to the
  // stated bound is there.
  void QuorumLossAwaitsApproval() {
    writer_->Stop();
    RequestLog log;
    const int64_t written = writer_->acknowledged().empty() ? 0 : writer_->acknowledged().back().revision;
    auto delta_revision = [&] {
      auto lease = world_->admin().Get(
          {"coordination.k8s.io/v1", "leases", "default", "etcd-main-delta-snap", ""}, log);
      const std::string holder = lease.ok() ? TextAt(*lease, {"spec", "holderIdentity"}) : "";
      return holder.empty() ? int64_t{0} : std::strtoll(holder.c_str(), nullptr, 10);
    };
    if (!Eventually([&] { return delta_revision() >= written; }, seconds(60)))
      return Fail("no delta backup reaches revision " + std::to_string(written) + "\n" + Describe());
    ++totals_.quorum_losses;
    Note(
        "fault quorum-loss: etcd-main-1 and etcd-main-2 deleted and their data directories wiped (backup "
        "at " +
        std::to_string(delta_revision()) + ", writes up to " + std::to_string(written) + ")");
    window_.quorum_lost = FormatMicroTime(std::chrono::system_clock::now());
    for (int member : {1, 2}) {
      const std::string data = world_->agent().VolumeDir(Pod(member), E2eWorld::kEtcd);
      if (!DeletePod(member)) return;
      std::error_code moved;
      std::filesystem::rename(data + "/new.etcd", dir_->path() + "/wiped-" + Pod(member), moved);
      if (moved) return Fail("cannot wipe " + data + ": " + moved.message());
    }
    auto operation = [&](std::string_view field) {
      return TextAt(world_->Etcd(), {"status", "lastOperation", field});
    };
    if (!Eventually([&] { return operation("state") == "AwaitingApproval"; }, seconds(120), seconds(1)))
      return Fail("the quorum loss is not awaiting an approval\n" + Describe());
    const Value* bound =
        ValueAt(world_->Etcd(), {"status", "lastOperation", "dataLossBound", "backupRevision"});
    const int64_t backup_revision = bound != nullptr && bound->is_int() ? bound->int_value() : 0;
    Note("awaiting approval of plan " + operation("planDigest") + ", data-loss bound: backup revision " +
         std::to_string(backup_revision));
    // Two more resyncs inside the window: what did not happen is read from the audit log.
    std::this_thread::sleep_for(seconds(5));
    window_.approved = FormatMicroTime(std::chrono::system_clock::now());
    const Value approval =
        Value::MakeMap({{Value::String("metadata"),
                         Value::MakeMap({{Value::String("annotations"),
                                          Value::MakeMap({{Value::String("ruleplane.dev/approve-plan"),
                                                           Value::String(operation("planDigest"))}})}})}});
    if (auto approved = world_->admin().MergePatch(E2eWorld::kEtcdResource, approval, log); !approved.ok())
      return Fail("cannot approve: " + approved.error().message);
    Note("approved");
    const auto begin = std::chrono::steady_clock::now();
    if (!Eventually([&] { return WhyUnsettled(0).empty(); }, seconds(300), seconds(1)))
      return Fail("not recovered 300 s after the approval: " + WhyUnsettled(0) + "\n" + Describe());
    NumberedWriter after(world_->ClientUrls(3), "/kchaos-after/");
    if (Status written_after = after.WriteSome(20); !written_after.ok())
      return Fail("writes fail after the recovery: " + written_after.error().message);
    Note("recovered in " +
         std::to_string(
             std::chrono::duration_cast<seconds>(std::chrono::steady_clock::now() - begin).count()) +
         " s after the approval");
    if (backup_revision < written)
      Fail("the data-loss bound (backup revision " + std::to_string(backup_revision) +
           ") is below the last acknowledged write (" + std::to_string(written) + ")");
    const auto urls = world_->ClientUrls(3);
    EtcdClient client(EtcdClientConfig{urls, {}, seconds(5)});
    const std::vector<std::string> missing = MissingKeys(client, *writer_, backup_revision);
    lost_ = std::max(lost_, static_cast<int64_t>(missing.size()));
    if (!missing.empty())
      Fail(std::to_string(missing.size()) + " acknowledged keys lost, e.g. " + missing.front());
    if (Status agree = MembersAgree(urls); !agree.ok()) Fail(agree.error().message);
    CheckAudit();
    if (audit_.disruptive_after_approval == 0)
      Fail("the audit log shows no disruptive write after the approval: the window check sees nothing");
    Note("checked: " + std::to_string(missing.size()) + " lost up to the bound, HashKV equal, " +
         std::to_string(audit_.disruptive_after_approval) + " disruptive writes, all after the approval");
  }

  void Finish() {
    if (writer_) {
      writer_->Stop();
      const milliseconds outage = writer_->longest_gap();
      totals_.acknowledged += static_cast<int64_t>(writer_->acknowledged().size());
      if (outage > totals_.longest_outage) {
        totals_.longest_outage = outage;
        totals_.longest_outage_seed = seed_;
      }
      if (!failed_ && writer_->acknowledged().size() < 100)
        Fail("the writer wrote too little to show a loss");
      if (outage > kOutageBound)
        Fail("the writer's longest outage was " + std::to_string(outage.count()) + " ms (bound " +
             std::to_string(kOutageBound.count()) + " ms)");
    }
    if (world_) CheckAudit();
    totals_.lost += lost_;
    totals_.split_clusters += split_clusters_;
    totals_.audit_violations += static_cast<int>(reported_.size());
    totals_.checked_writes += audit_.checked_writes;
    totals_.leadership_changes += audit_.leadership_changes;
    for (Replica& replica : replicas_) replica.process.Stop();
    Note("done: " + std::to_string(audit_.leadership_changes) + " leadership changes, " +
         std::to_string(audit_.checked_writes) + " controller writes checked, " +
         std::to_string(reported_.size()) + " audit violations");
  }

  const uint64_t seed_;
  const int faults_;
  Totals& totals_;
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<E2eWorld> world_;
  std::vector<Replica> replicas_;
  std::unique_ptr<NumberedWriter> writer_;
  ChaosLog chaos_log_{seed_, faults_};
  bool failed_ = false;
  AuditFindings audit_;
  ApprovalWindow window_;
  std::set<std::string> reported_;
  int64_t lost_ = 0;
  int split_clusters_ = 0;
};

std::string Summary(const Totals& totals) {
  std::ostringstream line;
  int faults = 0;
  for (int count : totals.faults) faults += count;
  line << "kubernetes chaos summary: " << totals.sequences << " sequences, " << faults << " faults (";
  for (int kind = 0; kind < kKinds; ++kind)
    line << (kind > 0 ? ", " : "") << kKindNames[kind] << " " << totals.faults[kind];
  line << "), " << totals.quorum_losses << " quorum losses recovered after an approval, "
       << totals.member_init_kills << " member-init runs killed, " << totals.unexpected_exits
       << " replicas ended on their own, " << totals.leadership_changes << " leadership changes, "
       << totals.checked_writes << " controller writes checked against the Lease holder, "
       << totals.stranger_requests_refused << " stranger's snapshot requests refused (429), "
       << totals.fulls_replaced_in_their_period << " full snapshots replaced by a newer one of their hour, "
       << totals.member_token_writes_refused << " writes with the members' token refused (403), "
       << totals.acknowledged << " acknowledged writes, " << totals.lost << " writes lost, "
       << totals.split_clusters << " split clusters, longest outage " << totals.longest_outage.count()
       << " ms (seed " << totals.longest_outage_seed << ", bound " << kOutageBound.count()
       << " ms), longest settle " << totals.longest_settle.count() << " ms, " << totals.audit_violations
       << " audit violations";
  if (!totals.failed_seeds.empty()) {
    line << "; failed seeds:";
    for (uint64_t seed : totals.failed_seeds) line << " " << seed;
  }
  return line.str();
}

TEST(ControllerChaos, ControllersAndMembersHealWithoutApprovalAndOnlyTheLeaseHolderWrites) {
  Totals totals;
  RunChaosCampaign<Sequence>(kCiSeeds, kCiFaults, totals,
                             "chaos.log, controller-*.log, kube/audit.log, node/pods/*/*.log");
  std::cout << Summary(totals) << std::endl;
}

}  // namespace
}  // namespace ruleplane::testing
