// Backups on one etcd database, ruleplane next to etcdctl (bench/README.md,
// "Backups"):
//
//   full snapshot   TakeFullBackup (what `ruleplane backup full` does) and
//                   `etcdctl snapshot save`
//   restore         LocalAdapter's RestoreFullSnapshot and a bare
//                   `etcdctl snapshot restore` of the same file
//   delta replay    LocalAdapter's ApplyIncrementalSnapshots of one delta
//                   file written with SerializeDelta and BackupStore::WriteDelta
//
//   backup_bench [MB]    the database's target size, default 100
//
// It starts its own single-member etcd on loopback in a directory of its own
// under $TMPDIR (or /tmp), stops every process it starts and removes the
// directory at the end (kept with RULEPLANE_KEEP_TEST_DIRS=1). Every figure
// but the delta write is the median of three runs, ruleplane's and etcdctl's
// interleaved so that both see the same page cache and background load.
// Besides the time, each line gives the CPU time of this process (ruleplane's
// own code) and of the children it waited for (etcdctl, the replay etcd); the
// source etcd's is in neither.
#include <stdlib.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "actions/local/local_adapter.h"
#include "adapters/etcd/etcd_client.h"
#include "adapters/local/backup_store.h"
#include "adapters/local/delta_file.h"
#include "adapters/local/snapshot_file.h"
#include "member/backup_taker.h"
#include "platform/process.h"

namespace ruleplane {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kRuns = 3;
constexpr double kBytesPerMB = 1e6;
constexpr size_t kFillValueBytes = 8 * 1024;
constexpr size_t kFillValuesPerTxn = 64;  // 512 KiB per transaction, under etcd's 1.5 MiB request limit
constexpr int64_t kDeltaEvents = 50000;
constexpr int64_t kDeltaRevisions = 5000;
constexpr int64_t kDeltaKeys = 10000;  // each key written five times; never twice in one revision
constexpr size_t kDeltaValueBytes = 200;
constexpr auto kCommandTimeout = std::chrono::minutes(10);
const std::string kMemberName = "bench";

Error BenchError(std::string message) { return Error{ErrorCode::kIo, std::move(message), {}}; }

// The directory everything goes to, removed with the object unless
// RULEPLANE_KEEP_TEST_DIRS=1.
class WorkDirectory {
 public:
  WorkDirectory() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern =
        std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/ruleplane-backup-bench-XXXXXX";
    const char* made = mkdtemp(pattern.data());
    path_ = made != nullptr ? made : "";
  }
  ~WorkDirectory() {
    const char* keep = std::getenv("RULEPLANE_KEEP_TEST_DIRS");
    if (path_.empty()) return;
    if (keep != nullptr && std::string(keep) == "1") {
      std::cerr << "backup_bench: kept " << path_ << "\n";
      return;
    }
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  WorkDirectory(const WorkDirectory&) = delete;
  WorkDirectory& operator=(const WorkDirectory&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// splitmix64: incompressible bytes, so that no compression flatters a figure.
class RandomBytes {
 public:
  std::string Next(size_t size) {
    std::string bytes(size, '\0');
    for (size_t i = 0; i < size; i += 8) {
      state_ += 0x9e3779b97f4a7c15;
      uint64_t word = state_;
      word = (word ^ (word >> 30)) * 0xbf58476d1ce4e5b9;
      word = (word ^ (word >> 27)) * 0x94d049bb133111eb;
      word ^= word >> 31;
      for (size_t j = i; j < std::min(size, i + 8); ++j, word >>= 8)
        bytes[j] = static_cast<char>(word & 0xff);
    }
    return bytes;
  }

 private:
  uint64_t state_ = 0;
};

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// CPU time (user + system) of this process, ruleplane's own code, or of its
// children that have been waited for (etcdctl; a replay etcd once stopped).
double CpuSeconds(int who) {
  rusage usage{};
  getrusage(who, &usage);
  auto seconds = [](const timeval& time) { return static_cast<double>(time.tv_sec) + time.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

struct Timing {
  double seconds = 0;
  double own_cpu_seconds = 0;
  double child_cpu_seconds = 0;
};

Result<Timing> Timed(const std::function<Status()>& action) {
  const auto start = Clock::now();
  const double own_start = CpuSeconds(RUSAGE_SELF), children_start = CpuSeconds(RUSAGE_CHILDREN);
  if (Status done = action(); !done.ok()) return done.error();
  return Timing{SecondsSince(start), CpuSeconds(RUSAGE_SELF) - own_start,
                CpuSeconds(RUSAGE_CHILDREN) - children_start};
}

// The runs of one operation; a figure is their median.
class Samples {
 public:
  void Add(const Timing& timing) {
    seconds_.push_back(timing.seconds);
    own_cpu_seconds_.push_back(timing.own_cpu_seconds);
    child_cpu_seconds_.push_back(timing.child_cpu_seconds);
  }
  Timing Median() const {
    return Timing{MedianOf(seconds_), MedianOf(own_cpu_seconds_), MedianOf(child_cpu_seconds_)};
  }

 private:
  static double MedianOf(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
  }
  std::vector<double> seconds_, own_cpu_seconds_, child_cpu_seconds_;
};

int64_t FileSize(const std::string& path) {
  std::error_code error;
  const auto size = fs::file_size(path, error);
  return error ? 0 : static_cast<int64_t>(size);
}

Status RemoveTree(const std::string& path) {
  std::error_code error;
  fs::remove_all(path, error);
  if (error) return BenchError("cannot remove " + path + ": " + error.message());
  return {};
}

Status RunEtcdctl(const std::vector<std::string>& argv) {
  auto result = RunCommand(argv, kCommandTimeout);
  if (!result.ok()) return result.error();
  if (result->exit_code != 0) {
    return BenchError(argv[0] + " " + argv[1] + " " + argv[2] + " exited with " +
                      std::to_string(result->exit_code) + ": " + result->err.substr(0, 2000));
  }
  return {};
}

std::string LoopbackUrl(int port) { return "http://127.0.0.1:" + std::to_string(port); }

// The etcd whose database every figure is taken from.
struct SourceMember {
  ChildProcess process;
  std::string client_url;
};

Result<SourceMember> StartSourceMember(const std::string& root) {
  SourceMember member;
  member.client_url = LoopbackUrl(FreeLoopbackPort());
  const std::string peer_url = LoopbackUrl(FreeLoopbackPort());
  auto started = ChildProcess::Start(
      {"etcd", "--name", kMemberName, "--data-dir", root + "/source", "--listen-client-urls",
       member.client_url, "--advertise-client-urls", member.client_url, "--listen-peer-urls", peer_url,
       "--initial-advertise-peer-urls", peer_url, "--initial-cluster", kMemberName + "=" + peer_url,
       "--quota-backend-bytes", std::to_string(int64_t{4} << 30)},
      root + "/source.log");
  if (!started.ok()) return started.error();
  member.process = std::move(*started);
  EtcdClient client(EtcdClientConfig{{member.client_url}, {}, std::chrono::seconds(2)});
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (true) {
    RequestLog reads;
    auto status = client.MemberStatus(member.client_url, reads);
    if (status.ok() && status->leader != 0) return member;
    if (!member.process.running() || Clock::now() > deadline) {
      return BenchError("etcd did not become ready; see " + root + "/source.log");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// Puts random 8 KiB values in transactions until etcd's database reaches
// `target_bytes`; its status then.
Result<EtcdStatus> Fill(EtcdClient& client, const std::string& endpoint, int64_t target_bytes) {
  RandomBytes random;
  int64_t next_key = 0;
  while (true) {
    RequestLog log;
    auto status = client.MemberStatus(endpoint, log);
    if (!status.ok()) return status.error();
    if (status->db_size >= target_bytes) return status;
    std::vector<EtcdEvent> puts(kFillValuesPerTxn);
    for (EtcdEvent& put : puts) {
      char key[32];
      std::snprintf(key, sizeof key, "/bench/fill/%08lld", static_cast<long long>(next_key++));
      put.kv.key = key;
      put.kv.value = random.Next(kFillValueBytes);
    }
    if (auto written = client.Txn(puts, log); !written.ok()) return written.error();
  }
}

// The delta etcd-backup-restore would have written for kDeltaEvents puts
// made after `full_revision`, kDeltaEvents / kDeltaRevisions per revision.
std::vector<EtcdEvent> DeltaEvents(int64_t full_revision) {
  RandomBytes random;
  std::vector<EtcdEvent> events(static_cast<size_t>(kDeltaEvents));
  const int64_t per_revision = kDeltaEvents / kDeltaRevisions;
  std::vector<int64_t> created(static_cast<size_t>(kDeltaKeys), 0);
  for (int64_t i = 0; i < kDeltaEvents; ++i) {
    const int64_t key_index = i % kDeltaKeys;
    const int64_t revision = full_revision + 1 + i / per_revision;
    char key[40];
    std::snprintf(key, sizeof key, "/registry/bench/delta/k%08lld", static_cast<long long>(key_index));
    KeyValue& kv = events[static_cast<size_t>(i)].kv;
    kv.key = key;
    kv.value = random.Next(kDeltaValueBytes);
    int64_t& created_at = created[static_cast<size_t>(key_index)];
    if (created_at == 0) created_at = revision;
    kv.create_revision = created_at;
    kv.mod_revision = revision;
    kv.version = i / kDeltaKeys + 1;
  }
  return events;
}

PlanStep LocalStep(const std::string& action, Value::Map params) {
  PlanStep step;
  step.id = "backup_bench/" + action;
  step.action = action;
  step.target = kMemberName;
  step.adapter = "local";
  step.params = Value::MakeMap(std::move(params));
  return step;
}

// A LocalAdapter for a member whose data directory is `data_dir`.
LocalMember MemberAt(const std::string& data_dir, const std::string& peer_url) {
  LocalMember member;
  member.name = kMemberName;
  member.peer_url = peer_url;
  member.data_dir = data_dir;
  member.command_timeout = kCommandTimeout;
  return member;
}

void PrintFigure(const std::string& kind, const std::string& what, const Timing& timing,
                 const std::string& rate) {
  char line[256];
  std::snprintf(line, sizeof line, "%-14s %-84s %6.2f s  CPU own %5.2f s child %5.2f s  %s", kind.c_str(),
                what.c_str(), timing.seconds, timing.own_cpu_seconds, timing.child_cpu_seconds, rate.c_str());
  std::cout << line << std::endl;
}

std::string MegabytesPerSecond(int64_t bytes, const Timing& timing) {
  char text[32];
  std::snprintf(text, sizeof text, "%6.0f MB/s", static_cast<double>(bytes) / kBytesPerMB / timing.seconds);
  return text;
}

std::string PerSecond(int64_t count, double seconds, const char* unit) {
  char text[48];
  std::snprintf(text, sizeof text, "%7.0f %s/s", static_cast<double>(count) / seconds, unit);
  return text;
}

// Full snapshots of the source member, ruleplane's and etcdctl's in turn.
// Returns the backup taken into `store` (the first run's), which the
// restores and the delta replay start from.
Result<TakenBackup> MeasureFullSnapshots(EtcdClient& client, const std::string& endpoint,
                                         const std::string& root, BackupStore& store) {
  Samples backups, streams, etcdctl_saves, statuses;
  int64_t snapshot_bytes = 0;
  TakenBackup kept;
  for (int run = 0; run < kRuns; ++run) {
    BackupStore run_store(run == 0 ? store.location() : root + "/store-" + std::to_string(run));
    auto backup = Timed([&]() -> Status {
      RequestLog log;
      auto taken = TakeFullBackup(client, run_store, BackupOptions{}, log);
      if (!taken.ok()) return taken.error();
      if (run == 0) kept = *taken;
      snapshot_bytes = FileSize(run_store.PathOf(taken->name));
      return {};
    });
    if (!backup.ok()) return backup.error();
    backups.Add(*backup);

    const std::string streamed = root + "/stream-" + std::to_string(run) + ".db";
    auto stream = Timed([&]() -> Status {
      RequestLog log;
      auto revision = client.Snapshot(endpoint, streamed, log);
      if (!revision.ok()) return revision.error();
      return {};
    });
    if (!stream.ok()) return stream.error();
    streams.Add(*stream);

    const std::string saved = root + "/etcdctl-" + std::to_string(run) + ".db";
    auto save = Timed([&] {
      return RunEtcdctl({"etcdctl", "--endpoints", endpoint, "snapshot", "save", saved});
    });
    if (!save.ok()) return save.error();
    etcdctl_saves.Add(*save);

    auto status = Timed([&]() -> Status {
      auto revision = SnapshotFileRevision(saved, kCommandTimeout);
      if (!revision.ok()) return revision.error();
      return {};
    });
    if (!status.ok()) return status.error();
    statuses.Add(*status);

    for (const std::string& path : {streamed, saved}) {
      if (Status removed = RemoveTree(path); !removed.ok()) return removed.error();
    }
    if (run > 0) {
      if (Status removed = RemoveTree(run_store.location()); !removed.ok()) return removed.error();
    }
  }
  PrintFigure("full snapshot",
              "ruleplane backup full (TakeFullBackup: stream, sha256, fsync, status, store move)",
              backups.Median(), MegabytesPerSecond(snapshot_bytes, backups.Median()));
  PrintFigure("full snapshot",
              "  of which EtcdClient::Snapshot (gateway JSON, base64, fsync, sha256, rename)",
              streams.Median(), MegabytesPerSecond(snapshot_bytes, streams.Median()));
  PrintFigure("full snapshot", "etcdctl snapshot save (gRPC stream, fsync, rename)", etcdctl_saves.Median(),
              MegabytesPerSecond(snapshot_bytes, etcdctl_saves.Median()));
  PrintFigure("verify", "etcdctl snapshot status (ruleplane's revision check)", statuses.Median(),
              MegabytesPerSecond(snapshot_bytes, statuses.Median()));
  return kept;
}

PlanStep RestoreStep(const std::string& snapshot, const std::string& initial_cluster) {
  return LocalStep("RestoreFullSnapshot",
                   {{Value::String("snapshot"), Value::String(snapshot)},
                    {Value::String("initialCluster"), Value::String(initial_cluster)}});
}

// Restores of the backup into fresh directories, ruleplane's and a bare
// etcdctl's of the same file in turn.
Status MeasureRestores(BackupStore& store, const TakenBackup& backup, const std::string& peer_url,
                       const std::string& root) {
  const std::string snapshot_path = store.PathOf(backup.name);
  const int64_t snapshot_bytes = FileSize(snapshot_path);
  const std::string initial_cluster = kMemberName + "=" + peer_url;
  Samples restores, etcdctl_restores;
  for (int run = 0; run < kRuns; ++run) {
    const std::string ruleplane_dir = root + "/restore-ruleplane-" + std::to_string(run);
    LocalAdapter adapter(MemberAt(ruleplane_dir + "/data", peer_url), &store, nullptr);
    auto restore = Timed([&] {
      RequestLog log;
      return adapter.Perform(RestoreStep(backup.name, initial_cluster), log);
    });
    if (!restore.ok()) return restore.error();
    restores.Add(*restore);

    const std::string etcdctl_dir = root + "/restore-etcdctl-" + std::to_string(run);
    auto etcdctl_restore = Timed([&] {
      return RunEtcdctl({"etcdctl", "snapshot", "restore", snapshot_path, "--name", kMemberName, "--data-dir",
                         etcdctl_dir, "--initial-cluster", initial_cluster, "--initial-advertise-peer-urls",
                         peer_url, "--initial-cluster-token", "etcd-cluster"});
    });
    if (!etcdctl_restore.ok()) return etcdctl_restore.error();
    etcdctl_restores.Add(*etcdctl_restore);

    for (const std::string& path : {ruleplane_dir, etcdctl_dir}) {
      if (Status removed = RemoveTree(path); !removed.ok()) return removed;
    }
  }
  PrintFigure("restore", "ruleplane RestoreFullSnapshot (copy, fsync, etcdctl restore, status, rename)",
              restores.Median(), MegabytesPerSecond(snapshot_bytes, restores.Median()));
  PrintFigure("restore", "etcdctl snapshot restore", etcdctl_restores.Median(),
              MegabytesPerSecond(snapshot_bytes, etcdctl_restores.Median()));
  return {};
}

// A delta after the backup, written with ruleplane's delta writer, then
// replayed on a restore of the backup (the restore is not timed) by
// ApplyIncrementalSnapshots, as member-init does.
Status MeasureDeltaReplay(BackupStore& store, const TakenBackup& backup, const std::string& peer_url,
                          const std::string& root) {
  const std::vector<EtcdEvent> events = DeltaEvents(backup.revision);
  const int64_t last_revision = backup.revision + kDeltaRevisions;
  std::string delta_name;
  int64_t delta_bytes = 0;
  auto write = Timed([&]() -> Status {
    // The receive time is written with every event and never read back.
    const std::string bytes = SerializeDelta(events, "2026-11-24T10:00:00.123456789Z");
    delta_bytes = static_cast<int64_t>(bytes.size());
    RequestLog log;
    auto name = store.WriteDelta(bytes, backup.revision + 1, last_revision, 0,
                                 std::chrono::system_clock::now(), "", log);
    if (!name.ok()) return name.error();
    delta_name = *name;
    return {};
  });
  if (!write.ok()) return write.error();

  const PlanStep replay_nothing =
      LocalStep("ApplyIncrementalSnapshots", {{Value::String("snapshots"), Value::MakeList({})}});
  const PlanStep replay_delta =
      LocalStep("ApplyIncrementalSnapshots",
                {{Value::String("snapshots"), Value::MakeList({Value::String(delta_name)})}});
  Samples start_stops, replays;
  for (int run = 0; run < kRuns; ++run) {
    const std::string directory = root + "/replay-" + std::to_string(run);
    LocalAdapter adapter(MemberAt(directory + "/data", peer_url), &store, nullptr);
    RequestLog restore_log;
    if (Status restored =
            adapter.Perform(RestoreStep(backup.name, kMemberName + "=" + peer_url), restore_log);
        !restored.ok()) {
      return restored;
    }
    auto start_stop = Timed([&] {
      RequestLog log;
      return adapter.Perform(replay_nothing, log);
    });
    if (!start_stop.ok()) return start_stop.error();
    start_stops.Add(*start_stop);
    auto replay = Timed([&] {
      RequestLog log;
      return adapter.Perform(replay_delta, log);
    });
    if (!replay.ok()) return replay.error();
    replays.Add(*replay);

    auto replayed = SnapshotFileRevision(directory + "/data/member/snap/db", kCommandTimeout);
    if (!replayed.ok()) return replayed.error();
    if (*replayed != last_revision) {
      return BenchError("after the replay the database has revision " + std::to_string(*replayed) +
                        ", expected " + std::to_string(last_revision));
    }
    if (Status removed = RemoveTree(directory); !removed.ok()) return removed;
  }

  const std::string delta_what = std::to_string(kDeltaEvents) + " events, " +
                                 std::to_string(kDeltaRevisions) + " revisions, " +
                                 std::to_string(delta_bytes / 1000) + " kB";
  auto rates = [&](double seconds) {
    return PerSecond(kDeltaEvents, seconds, "events") + "  " +
           PerSecond(kDeltaRevisions, seconds, "revisions");
  };
  PrintFigure("delta write", "SerializeDelta + BackupStore::WriteDelta (" + delta_what + ")", *write,
              PerSecond(kDeltaEvents, write->seconds, "events"));
  PrintFigure("delta replay", "ApplyIncrementalSnapshots of no file (the replay etcd's start and stop)",
              start_stops.Median(), "");
  PrintFigure("delta replay", "ApplyIncrementalSnapshots (" + delta_what + ")", replays.Median(),
              rates(replays.Median().seconds));
  const Timing without_start_stop{
      replays.Median().seconds - start_stops.Median().seconds,
      replays.Median().own_cpu_seconds - start_stops.Median().own_cpu_seconds,
      replays.Median().child_cpu_seconds - start_stops.Median().child_cpu_seconds};
  PrintFigure("delta replay", "  without the start and stop", without_start_stop,
              rates(without_start_stop.seconds));
  return {};
}

Status Run(const std::string& root, int64_t target_megabytes) {
  auto source = StartSourceMember(root);
  if (!source.ok()) return source.error();
  const std::string endpoint = source->client_url;
  // Configured as `ruleplane backup full --endpoints URL` configures it.
  EtcdClientConfig config;
  config.endpoints = {endpoint};
  EtcdClient client(config);

  const auto fill_start = Clock::now();
  auto filled = Fill(client, endpoint, target_megabytes * static_cast<int64_t>(kBytesPerMB));
  if (!filled.ok()) return filled.error();
  char heading[160];
  std::snprintf(heading, sizeof heading,
                "database: %.1f MB, revision %lld (filled in %.1f s); MB = 10^6 bytes",
                static_cast<double>(filled->db_size) / kBytesPerMB, static_cast<long long>(filled->revision),
                SecondsSince(fill_start));
  std::cout << heading << std::endl;

  BackupStore store(root + "/store-0");
  auto backup = MeasureFullSnapshots(client, endpoint, root, store);
  if (!backup.ok()) return backup.error();
  // The restored member's peer URL: never listened on, so any free port does.
  const std::string peer_url = LoopbackUrl(FreeLoopbackPort());
  if (Status measured = MeasureRestores(store, *backup, peer_url, root); !measured.ok()) return measured;
  if (Status measured = MeasureDeltaReplay(store, *backup, peer_url, root); !measured.ok()) return measured;
  source->process.Stop(std::chrono::seconds(10));
  return {};
}

}  // namespace
}  // namespace ruleplane

int main(int argc, char** argv) {
  int64_t target_megabytes = 100;
  if (argc > 2 || (argc == 2 && (target_megabytes = std::atoll(argv[1])) <= 0)) {
    std::cerr << "usage: backup_bench [MB]   (the database's target size, default 100)\n";
    return 2;
  }
  setenv("ETCDCTL_API", "3", 1);
  ruleplane::WorkDirectory directory;
  if (directory.path().empty()) {
    std::cerr << "backup_bench: cannot create a temporary directory\n";
    return 1;
  }
  if (ruleplane::Status done = ruleplane::Run(directory.path(), target_megabytes); !done.ok()) {
    std::cerr << "backup_bench: " << done.error().message << "\n";
    return 1;
  }
  return 0;
}
