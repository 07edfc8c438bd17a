#include "member/member_agent_loop.h"

#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

#include "engine/common/json_value.h"
#include "member/member_backups.h"

namespace ruleplane {
namespace {

// Until `period` after `started`, or until `stop`; false when stopping.
bool WaitUntilNext(std::chrono::steady_clock::time_point started, std::chrono::seconds period,
                   const std::atomic<bool>& stop) {
  while (!stop && std::chrono::steady_clock::now() - started < period) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return !stop;
}

// The backups' own clients and store; absent without a backup store.
struct BackupSide {
  BackupSide(const MemberAgentLoopOptions& options, std::unique_ptr<ObjectStore> objects,
             const std::atomic<bool>* stop)
      : cluster(options.etcd),
        kube(options.kube),
        store(std::move(objects)),
        backups(options.agent, cluster, kube, store, stop) {}
  EtcdClient cluster;
  KubeClient kube;
  BackupStore store;
  MemberBackups backups;
};

// The store named by the options (the command checked them before).
Result<std::unique_ptr<BackupSide>> OpenBackupSide(const MemberAgentLoopOptions& options,
                                                   const std::atomic<bool>* stop) {
  auto objects = OpenObjectStore(options.store);
  if (!objects.ok()) return objects.error();
  return std::make_unique<BackupSide>(options, std::move(*objects), stop);
}

}  // namespace

AgentRound RunMemberAgentOnce(const MemberAgentLoopOptions& options) {
  EtcdClient cluster(options.etcd);
  KubeClient kube(options.kube);
  MemberAgent agent(options.agent, cluster, kube);
  AgentRound round = agent.Heartbeat(std::chrono::system_clock::now());
  if (round.healthy && !options.store.provider.empty()) {
    auto side = OpenBackupSide(options, nullptr);
    if (!side.ok()) {
      round.error += (round.error.empty() ? "" : "; ") + ("backup store: " + side.error().message);
      return round;
    }
    const BackupRound backup = (*side)->backups.Run(std::chrono::system_clock::now());
    round.backup = backup.backup;
    round.collected = backup.collected;
    if (!backup.error.empty()) round.error += (round.error.empty() ? "" : "; ") + backup.error;
  }
  return round;
}

void RunMemberAgentLoop(const MemberAgentLoopOptions& options, const std::atomic<bool>& stop,
                        std::ostream& log) {
  EtcdClient cluster(options.etcd);
  KubeClient kube(options.kube);
  cluster.set_cancel(&stop);
  kube.set_cancel(&stop);
  MemberAgent agent(options.agent, cluster, kube);
  std::unique_ptr<BackupSide> side;
  if (!options.store.provider.empty()) {
    // The command checked the store's configuration: this fails only when
    // the credentials changed in between. The heartbeat goes on without backups.
    auto opened = OpenBackupSide(options, &stop);
    if (opened.ok()) {
      side = std::move(*opened);
      side->cluster.set_cancel(&stop);
      side->kube.set_cancel(&stop);
    } else {
      log << FormatJson(Value::MakeMap(
                 {{Value::String("error"), Value::String("backup store: " + opened.error().message)}}))
          << std::endl;
    }
  }
  std::mutex printing;
  auto print = [&](const Value& line) {
    std::lock_guard<std::mutex> lock(printing);
    log << FormatJson(line) << std::endl;
  };
  std::thread backup_thread;
  if (side) {
    backup_thread = std::thread([&] {
      while (true) {
        const auto started = std::chrono::steady_clock::now();
        const BackupRound round = side->backups.Run(std::chrono::system_clock::now());
        if (!round.idle()) print(round.ToValue());
        if (!WaitUntilNext(started, options.agent.heartbeat, stop)) break;
      }
    });
  }
  while (true) {
    const auto started = std::chrono::steady_clock::now();
    print(agent.Heartbeat(std::chrono::system_clock::now()).ToValue());
    if (!WaitUntilNext(started, options.agent.heartbeat, stop)) break;
  }
  if (backup_thread.joinable()) backup_thread.join();
}

}  // namespace ruleplane
