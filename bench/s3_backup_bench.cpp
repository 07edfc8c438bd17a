// A full backup of one etcd database uploaded to S3 and restored from it,
// ruleplane next to etcdctl + awscli (bench/README.md, "Backups through S3";
// issue 27: within 1.5x of `etcdctl snapshot save` plus `aws s3 cp` of the
// same bytes to the same server, peak memory under 64 MiB):
//
//   upload    `ruleplane backup full --storage-provider S3 ...` as a child
//             process, uncompressed and with --compression gzip; the
//             baseline `etcdctl snapshot save FILE` then `aws s3 cp FILE
//             s3://...`; and, to split ruleplane's time, the same command
//             into a Local store (the snapshot and its checks, no upload)
//   restore   BackupStore::ReadSnapshotToFile from the S3 store, in a child
//             process of its own (this program run again), then `etcdctl
//             snapshot restore`; the baseline `aws s3 cp s3://... FILE` then
//             the same `etcdctl snapshot restore`
//
//   s3_backup_bench [MB [RUNS]] [--ruleplane PATH]
//       MB     the database's target size, default 1000
//       RUNS   runs of every figure, each figure their median; default 3 up
//              to 300 MB, 1 above (a 1 GB run takes minutes)
//
// Both sides talk to the same server: s3rver (tests/support/s3_server.h,
// Node.js, single-threaded, every object a file on this machine's disk), on
// loopback, started by this program. Its CPU time during each operation is
// printed with it: on 2 cores it competes with the client for the CPU, and it
// is part of both sides' figures. The etcd the database lives in is started
// here too (a single member on loopback); its CPU time is printed as well.
//
// Every child is started with posix_spawn (no copy of this process's pages)
// and reaped with wait4, whose rusage gives its CPU time and its peak
// resident set: ru_maxrss, the largest of the child's and of the children
// it waited for (ruleplane runs `etcdctl snapshot status` to check the
// revision; etcdctl maps the whole database, so that figure is etcdctl's).
// A process's own peak, without its children, is its VmHWM read from /proc
// every 10 ms while it runs (the last reading before it exits); with it,
// the largest RssAnon read, the part of the resident set no file backs.
//
// Everything lives in a directory of its own under $TMPDIR (or /tmp),
// removed at the end (kept with RULEPLANE_KEEP_TEST_DIRS=1); every process
// started here is stopped by its PID. The ruleplane binary runs from a copy
// in that directory (a shared build tree may relink it meanwhile). awscli
// is the environment's `aws` (`pyenv which aws` when pyenv shims it, so that
// pyenv's start is not counted), with its default configuration (8 MiB
// parts, 10 concurrent requests), no progress output; without `aws`, boto3's
// upload_file / download_file, same defaults, and the output says so.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "adapters/etcd/etcd_client.h"
#include "adapters/local/backup_store.h"
#include "adapters/object_store/store_config.h"
#include "platform/process.h"
#include "tests/support/s3_server.h"
#include "tests/support/source_paths.h"

extern char** environ;

namespace ruleplane {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr double kBytesPerMB = 1e6;
constexpr double kKiBPerMiB = 1024;
constexpr size_t kFillValueBytes = 8 * 1024;
constexpr size_t kFillValuesPerTxn = 64;  // 512 KiB per transaction, under etcd's 1.5 MiB request limit
constexpr auto kCommandTimeout = std::chrono::minutes(30);
constexpr double kTimeGoal = 1.5;
constexpr double kMemoryGoalMiB = 64;
const std::string kMemberName = "bench";
const std::string kBucket = "backups";
const char* const kRestoreChild = "--restore-child";

// Set by SIGINT / SIGTERM: the running child is killed, the run unwinds and
// cleans up.
std::atomic<bool> stopping{false};
std::atomic<pid_t> running_child{0};

Error BenchError(std::string message) { return Error{ErrorCode::kIo, std::move(message), {}}; }

class WorkDirectory {
 public:
  WorkDirectory() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern =
        std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/ruleplane-s3-backup-bench-XXXXXX";
    const char* made = mkdtemp(pattern.data());
    path_ = made != nullptr ? made : "";
  }
  ~WorkDirectory() {
    const char* keep = std::getenv("RULEPLANE_KEEP_TEST_DIRS");
    if (path_.empty()) return;
    if (keep != nullptr && std::string(keep) == "1") {
      std::cerr << "s3_backup_bench: kept " << path_ << "\n";
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

// splitmix64: incompressible bytes, so that gzip flatters nothing.
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

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

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

// User + system CPU seconds of a running process (all its threads), from
// /proc/<pid>/stat; 0 when it cannot be read.
double ProcessCpuSeconds(pid_t pid) {
  const std::string stat = Slurp("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return 0;
  std::istringstream fields(stat.substr(paren + 2));
  std::string field;
  unsigned long long user = 0, system = 0;
  // After the name: state (3) ... utime (14), stime (15).
  for (int index = 3; index <= 15 && (fields >> field); ++index) {
    if (index == 14) user = std::strtoull(field.c_str(), nullptr, 10);
    if (index == 15) system = std::strtoull(field.c_str(), nullptr, 10);
  }
  return static_cast<double>(user + system) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// A line of /proc/<pid>/status ("VmHWM", "VmRSS") in KiB; -1 when absent.
int64_t ProcessStatusKiB(pid_t pid, const std::string& key) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.compare(0, key.size() + 1, key + ":") == 0) return std::atoll(line.c_str() + key.size() + 1);
  }
  return -1;
}

// What one child cost.
struct Measured {
  double seconds = 0;
  double cpu_seconds = 0;    // the child's and its reaped children's, user + system
  double tree_peak_mib = 0;  // wait4's ru_maxrss: the child or any child it waited for
  double own_peak_mib = 0;   // the child's own VmHWM, sampled
  double own_anon_mib = 0;   // the largest of its RssAnon samples: what no file backs
  double s3rver_cpu_seconds = 0;
  double etcd_cpu_seconds = 0;

  Measured& operator+=(const Measured& other) {
    seconds += other.seconds;
    cpu_seconds += other.cpu_seconds;
    tree_peak_mib = std::max(tree_peak_mib, other.tree_peak_mib);
    own_peak_mib = std::max(own_peak_mib, other.own_peak_mib);
    own_anon_mib = std::max(own_anon_mib, other.own_anon_mib);
    s3rver_cpu_seconds += other.s3rver_cpu_seconds;
    etcd_cpu_seconds += other.etcd_cpu_seconds;
    return *this;
  }
};

// The processes whose CPU time every measurement records.
struct Watched {
  pid_t s3rver = 0;
  pid_t etcd = 0;
};

// Runs argv (argv[0] looked up in PATH) with `environment` ("NAME=value")
// on top of this process's, stdout and stderr to <log>.out and <log>.err,
// stdin from /dev/null; fails on a non-zero exit, naming what it said.
Result<Measured> RunMeasured(const std::vector<std::string>& argv, const std::string& log,
                             const Watched& watched, const std::vector<std::string>& environment = {}) {
  std::map<std::string, std::string> merged;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const size_t equals = text.find('=');
    if (equals != std::string::npos) merged[text.substr(0, equals)] = text;
  }
  for (const std::string& text : environment) merged[text.substr(0, text.find('='))] = text;
  std::vector<std::string> environment_strings;
  for (const auto& [name, text] : merged) environment_strings.push_back(text);
  std::vector<char*> envp, args;
  for (std::string& text : environment_strings) envp.push_back(text.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (std::string& arg : argv_copy) args.push_back(arg.data());
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, (log + ".out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, (log + ".err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);

  const double s3rver_start = watched.s3rver > 0 ? ProcessCpuSeconds(watched.s3rver) : 0;
  const double etcd_start = watched.etcd > 0 ? ProcessCpuSeconds(watched.etcd) : 0;
  const auto start = Clock::now();
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return BenchError("cannot start " + argv[0] + ": " + std::strerror(spawned));
  running_child = pid;

  Measured measured;
  int64_t own_hwm_kib = 0, own_anon_kib = 0;
  int wait_status = 0;
  rusage usage{};
  bool timed_out = false;
  while (true) {
    const pid_t reaped = wait4(pid, &wait_status, WNOHANG, &usage);
    if (reaped == pid) break;
    if (reaped < 0 && errno != EINTR) {
      const std::string reason = std::strerror(errno);
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      running_child = 0;
      return BenchError("wait4 " + argv[0] + ": " + reason);
    }
    own_hwm_kib = std::max(own_hwm_kib, ProcessStatusKiB(pid, "VmHWM"));
    own_anon_kib = std::max(own_anon_kib, ProcessStatusKiB(pid, "RssAnon"));
    if (!timed_out && (stopping || Clock::now() - start > kCommandTimeout)) {
      kill(pid, SIGKILL);
      timed_out = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  measured.seconds = SecondsSince(start);
  running_child = 0;
  auto seconds = [](const timeval& time) { return static_cast<double>(time.tv_sec) + time.tv_usec / 1e6; };
  measured.cpu_seconds = seconds(usage.ru_utime) + seconds(usage.ru_stime);
  measured.tree_peak_mib = static_cast<double>(usage.ru_maxrss) / kKiBPerMiB;
  measured.own_peak_mib = static_cast<double>(own_hwm_kib) / kKiBPerMiB;
  measured.own_anon_mib = static_cast<double>(own_anon_kib) / kKiBPerMiB;
  if (watched.s3rver > 0) measured.s3rver_cpu_seconds = ProcessCpuSeconds(watched.s3rver) - s3rver_start;
  if (watched.etcd > 0) measured.etcd_cpu_seconds = ProcessCpuSeconds(watched.etcd) - etcd_start;
  if (timed_out || stopping) return BenchError(argv[0] + (stopping ? " was stopped" : " ran out of time"));
  if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
    std::string what;
    for (const std::string& arg : argv) what += (what.empty() ? "" : " ") + arg;
    return BenchError(what + " failed (status " + std::to_string(wait_status) +
                      "): " + Slurp(log + ".err").substr(0, 2000) + Slurp(log + ".out").substr(0, 2000));
  }
  return measured;
}

std::string LoopbackUrl(int port) { return "http://127.0.0.1:" + std::to_string(port); }

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
    if (!member.process.running() || Clock::now() > deadline || stopping) {
      return BenchError("etcd did not become ready; see " + root + "/source.log");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// Random 8 KiB values in 512 KiB transactions until the database reaches
// `target_bytes`; its status then.
Result<EtcdStatus> Fill(EtcdClient& client, const std::string& endpoint, int64_t target_bytes) {
  RandomBytes random;
  int64_t next_key = 0;
  while (true) {
    if (stopping) return BenchError("stopped while filling the database");
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

// The runs of one operation; a figure is the median of each field.
class Samples {
 public:
  void Add(const Measured& measured) { runs_.push_back(measured); }
  Measured Median() const {
    Measured median;
    median.seconds = MedianOf(&Measured::seconds);
    median.cpu_seconds = MedianOf(&Measured::cpu_seconds);
    median.tree_peak_mib = MedianOf(&Measured::tree_peak_mib);
    median.own_peak_mib = MedianOf(&Measured::own_peak_mib);
    median.own_anon_mib = MedianOf(&Measured::own_anon_mib);
    median.s3rver_cpu_seconds = MedianOf(&Measured::s3rver_cpu_seconds);
    median.etcd_cpu_seconds = MedianOf(&Measured::etcd_cpu_seconds);
    return median;
  }
  // The largest peak of any run: the memory goal is about the worst.
  double MaxOwnPeak() const {
    double most = 0;
    for (const Measured& run : runs_) most = std::max(most, run.own_peak_mib);
    return most;
  }

 private:
  double MedianOf(double Measured::*field) const {
    std::vector<double> values;
    for (const Measured& run : runs_) values.push_back(run.*field);
    std::sort(values.begin(), values.end());
    return values.empty() ? 0 : values[values.size() / 2];
  }
  std::vector<Measured> runs_;
};

void PrintHeader() {
  char line[320];
  std::snprintf(line, sizeof line, "%-8s %-62s %8s %8s %9s %9s %9s %8s %9s %7s", "", "what", "seconds",
                "MB/s", "peak MiB", "anon MiB", "tree MiB", "CPU s", "s3rver s", "etcd s");
  std::cout << line << std::endl;
}

// One figure; for a sum of several processes, the largest of their peaks.
void PrintFigure(const std::string& kind, const std::string& what, const Measured& figure, int64_t bytes) {
  char line[320];
  std::snprintf(line, sizeof line, "%-8s %-62s %8.2f %8.1f %9.1f %9.1f %9.1f %8.2f %9.2f %7.2f", kind.c_str(),
                what.c_str(), figure.seconds, static_cast<double>(bytes) / kBytesPerMB / figure.seconds,
                figure.own_peak_mib, figure.own_anon_mib, figure.tree_peak_mib, figure.cpu_seconds,
                figure.s3rver_cpu_seconds, figure.etcd_cpu_seconds);
  std::cout << line << std::endl;
}

// How awscli is run: the `aws` command, or python3 with boto3.
struct AwsCli {
  std::string aws;     // the aws executable, "" when there is none
  std::string python;  // a python3 with boto3, when there is no aws
  std::vector<std::string> environment;
  std::string endpoint;

  std::string Name() const { return aws.empty() ? "boto3" : "aws s3 cp"; }
  std::string Describe() const {
    return aws.empty() ? "boto3 upload_file/download_file (" + python + ")" : "aws s3 cp (" + aws + ")";
  }

  std::vector<std::string> Copy(const std::string& from, const std::string& to) const {
    if (!aws.empty()) return {aws, "--endpoint-url", endpoint, "s3", "cp", "--only-show-errors", from, to};
    const bool upload = to.rfind("s3://", 0) == 0;
    const std::string url = upload ? to : from;
    const std::string file = upload ? from : to;
    const size_t slash = url.find('/', 5);
    const std::string bucket = url.substr(5, slash - 5), key = url.substr(slash + 1);
    const std::string script =
        "import sys, boto3\n"
        "s3 = boto3.client('s3', endpoint_url=sys.argv[1])\n"
        "getattr(s3, sys.argv[2])(*sys.argv[3:])\n";
    if (upload) return {python, "-c", script, endpoint, "upload_file", file, bucket, key};
    return {python, "-c", script, endpoint, "download_file", bucket, key, file};
  }
};

bool Executable(const std::string& path) { return !path.empty() && access(path.c_str(), X_OK) == 0; }

std::string OnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream directories(path != nullptr ? path : "");
  std::string directory;
  while (std::getline(directories, directory, ':')) {
    if (Executable(directory + "/" + name)) return directory + "/" + name;
  }
  return "";
}

AwsCli FindAwsCli(const std::string& root, const std::string& endpoint) {
  AwsCli cli;
  cli.endpoint = endpoint;
  // s3rver's only account; no configuration file of the user's takes part.
  cli.environment = {"AWS_ACCESS_KEY_ID=S3RVER", "AWS_SECRET_ACCESS_KEY=S3RVER",
                     "AWS_DEFAULT_REGION=us-east-1", "AWS_CONFIG_FILE=" + root + "/aws-config",
                     "AWS_SHARED_CREDENTIALS_FILE=" + root + "/aws-creds"};
  cli.aws = OnPath("aws");
  if (!cli.aws.empty() && cli.aws.find("/shims/") != std::string::npos) {
    // A pyenv shim runs pyenv before aws: time that is not awscli's.
    auto which = RunCommand({"pyenv", "which", "aws"}, std::chrono::seconds(30));
    if (which.ok() && which->exit_code == 0) {
      std::string real = which->out.substr(0, which->out.find('\n'));
      if (Executable(real)) cli.aws = real;
    }
  }
  if (cli.aws.empty()) {
    for (const std::string python : {"python3", "/usr/bin/python3"}) {
      auto probe = RunCommand({python, "-c", "import boto3"}, std::chrono::seconds(30));
      if (probe.ok() && probe->exit_code == 0) {
        cli.python = python;
        break;
      }
    }
  }
  return cli;
}

struct Setup {
  std::string root;
  std::string ruleplane;
  std::string credentials;  // the S3 store's credentials directory
  std::string s3_endpoint;
  std::string etcd_endpoint;
  std::string peer_url;  // the restored member's, never listened on
  Watched watched;
  AwsCli aws;
};

// `ruleplane backup full` into the S3 store under `prefix`, or, with an
// empty prefix, into the Local store `local_store`.
std::vector<std::string> RuleplaneBackup(const Setup& setup, const std::string& prefix,
                                         const std::string& compression,
                                         const std::string& local_store = "") {
  std::vector<std::string> argv = {
      setup.ruleplane, "backup",    "full",      "--endpoints", setup.etcd_endpoint,
      "--compression", compression, "--timeout", "3600"};
  if (!local_store.empty()) {
    argv.insert(argv.end(), {"--backup-store", local_store});
    return argv;
  }
  argv.insert(argv.end(), {"--storage-provider", "S3", "--store-container", kBucket, "--store-prefix", prefix,
                           "--store-endpoint-override", setup.s3_endpoint, "--store-credentials",
                           setup.credentials, "--snapstore-temp-directory", setup.root + "/scratch"});
  return argv;
}

// The snapshot's name from `ruleplane backup full`'s output
// ("Full-00000000-00001234-1700000000  revision 1234").
Result<std::string> BackupName(const std::string& log) {
  const std::string out = Slurp(log + ".out");
  const std::string name = out.substr(0, out.find_first_of(" \n"));
  if (name.rfind("Full-", 0) != 0) return BenchError("ruleplane backup full printed: " + out);
  return name;
}

std::vector<std::string> EtcdctlRestore(const Setup& setup, const std::string& file, const std::string& dir) {
  return {"etcdctl",
          "snapshot",
          "restore",
          file,
          "--name",
          kMemberName,
          "--data-dir",
          dir,
          "--initial-cluster",
          kMemberName + "=" + setup.peer_url,
          "--initial-advertise-peer-urls",
          setup.peer_url,
          "--initial-cluster-token",
          "etcd-cluster"};
}

// This program again, as the restore's child: ReadSnapshotToFile alone.
std::vector<std::string> RestoreChild(const Setup& setup, const std::string& prefix, const std::string& name,
                                      const std::string& destination) {
  return {"/proc/self/exe", kRestoreChild, setup.s3_endpoint, setup.credentials,
          prefix,           name,          destination,       setup.root + "/scratch"};
}

struct Figures {
  Samples local, status, upload, upload_gzip, etcdctl_save, aws_upload, baseline_upload;
  Samples download, download_gzip, etcdctl_restore, restore, aws_download, etcdctl_restore_baseline,
      baseline_restore;
};

Status MeasureRun(const Setup& setup, int run, Figures& figures, int64_t& snapshot_bytes,
                  int64_t& gzip_bytes) {
  const std::string tag = std::to_string(run);
  const std::string logs = setup.root + "/logs/";
  const Watched& watched = setup.watched;

  // Uploads, interleaved: each side sees the same page cache and server.
  auto local_backup = RunMeasured(RuleplaneBackup(setup, "", "none", setup.root + "/local-" + tag),
                                  logs + "local-" + tag, watched);
  if (!local_backup.ok()) return local_backup.error();
  figures.local.Add(*local_backup);
  if (Status removed = RemoveTree(setup.root + "/local-" + tag); !removed.ok()) return removed;

  const std::string prefix = "ruleplane-" + tag;
  auto upload = RunMeasured(RuleplaneBackup(setup, prefix, "none"), logs + "upload-" + tag, watched);
  if (!upload.ok()) return upload.error();
  figures.upload.Add(*upload);
  auto name = BackupName(logs + "upload-" + tag);
  if (!name.ok()) return name.error();

  const std::string saved = setup.root + "/baseline-" + tag + ".db";
  auto save = RunMeasured({"etcdctl", "--endpoints", setup.etcd_endpoint, "snapshot", "save", saved},
                          logs + "save-" + tag, watched);
  if (!save.ok()) return save.error();
  snapshot_bytes = FileSize(saved);
  const std::string baseline_url = "s3://" + kBucket + "/baseline-" + tag + "/snapshot.db";
  auto aws_upload = RunMeasured(setup.aws.Copy(saved, baseline_url), logs + "aws-upload-" + tag, watched,
                                setup.aws.environment);
  if (!aws_upload.ok()) return aws_upload.error();
  figures.etcdctl_save.Add(*save);
  figures.aws_upload.Add(*aws_upload);
  Measured baseline = *save;
  baseline += *aws_upload;
  figures.baseline_upload.Add(baseline);
  // What ruleplane runs to read the file's revision, on the same bytes.
  auto status =
      RunMeasured({"etcdctl", "snapshot", "status", saved, "-w", "json"}, logs + "status-" + tag, watched);
  if (!status.ok()) return status.error();
  figures.status.Add(*status);
  if (Status removed = RemoveTree(saved); !removed.ok()) return removed;

  const std::string gzip_prefix = "ruleplane-gzip-" + tag;
  auto upload_gzip =
      RunMeasured(RuleplaneBackup(setup, gzip_prefix, "gzip"), logs + "upload-gzip-" + tag, watched);
  if (!upload_gzip.ok()) return upload_gzip.error();
  figures.upload_gzip.Add(*upload_gzip);
  auto gzip_name = BackupName(logs + "upload-gzip-" + tag);
  if (!gzip_name.ok()) return gzip_name.error();

  // Restores: the download, then etcdctl snapshot restore of the file.
  const std::string downloaded = setup.root + "/restore-ruleplane-" + tag + ".db";
  auto download =
      RunMeasured(RestoreChild(setup, prefix, *name, downloaded), logs + "download-" + tag, watched);
  if (!download.ok()) return download.error();
  figures.download.Add(*download);
  auto restored = RunMeasured(EtcdctlRestore(setup, downloaded, setup.root + "/restore-ruleplane-" + tag),
                              logs + "restore-" + tag, watched);
  if (!restored.ok()) return restored.error();
  figures.etcdctl_restore.Add(*restored);
  Measured restore = *download;
  restore += *restored;
  figures.restore.Add(restore);

  const std::string aws_downloaded = setup.root + "/restore-aws-" + tag + ".db";
  auto aws_download = RunMeasured(setup.aws.Copy(baseline_url, aws_downloaded), logs + "aws-download-" + tag,
                                  watched, setup.aws.environment);
  if (!aws_download.ok()) return aws_download.error();
  figures.aws_download.Add(*aws_download);
  auto aws_restored = RunMeasured(EtcdctlRestore(setup, aws_downloaded, setup.root + "/restore-aws-" + tag),
                                  logs + "restore-aws-" + tag, watched);
  if (!aws_restored.ok()) return aws_restored.error();
  figures.etcdctl_restore_baseline.Add(*aws_restored);
  Measured baseline_restore = *aws_download;
  baseline_restore += *aws_restored;
  figures.baseline_restore.Add(baseline_restore);
  if (FileSize(downloaded) != FileSize(aws_downloaded)) {
    return BenchError("ruleplane restored " + std::to_string(FileSize(downloaded)) + " bytes, aws " +
                      std::to_string(FileSize(aws_downloaded)));
  }

  const std::string gunzipped = setup.root + "/restore-ruleplane-gzip-" + tag + ".db";
  auto download_gzip = RunMeasured(RestoreChild(setup, gzip_prefix, *gzip_name, gunzipped),
                                   logs + "download-gzip-" + tag, watched);
  if (!download_gzip.ok()) return download_gzip.error();
  figures.download_gzip.Add(*download_gzip);
  if (FileSize(gunzipped) != FileSize(downloaded)) {
    return BenchError("the gzip snapshot restored to " + std::to_string(FileSize(gunzipped)) +
                      " bytes, not " + std::to_string(FileSize(downloaded)));
  }
  gzip_bytes = 0;
  for (const auto& entry :
       fs::recursive_directory_iterator(setup.root + "/s3rver-data/" + kBucket + "/" + gzip_prefix)) {
    if (entry.is_regular_file() && entry.path().string().ends_with("_S3rver_object"))
      gzip_bytes += static_cast<int64_t>(entry.file_size());
  }

  for (const std::string& path :
       {downloaded, aws_downloaded, gunzipped, setup.root + "/restore-ruleplane-" + tag,
        setup.root + "/restore-aws-" + tag}) {
    if (Status removed = RemoveTree(path); !removed.ok()) return removed;
  }
  // The objects are not read again: s3rver's disk is this machine's.
  for (const std::string& folder : {prefix, gzip_prefix, "baseline-" + tag}) {
    if (Status removed = RemoveTree(setup.root + "/s3rver-data/" + kBucket + "/" + folder); !removed.ok())
      return removed;
  }
  return {};
}

const char* Verdict(bool met) { return met ? "met" : "NOT met"; }

void PrintSummary(const Figures& figures, int64_t snapshot_bytes) {
  const Measured upload = figures.upload.Median(), baseline = figures.baseline_upload.Median();
  const Measured restore = figures.restore.Median(), baseline_restore = figures.baseline_restore.Median();
  const double upload_ratio = upload.seconds / baseline.seconds;
  const double restore_ratio = restore.seconds / baseline_restore.seconds;
  const double upload_peak = std::max(figures.upload.MaxOwnPeak(), figures.upload_gzip.MaxOwnPeak());
  const double download_peak = std::max(figures.download.MaxOwnPeak(), figures.download_gzip.MaxOwnPeak());
  char line[512];
  std::snprintf(line, sizeof line,
                "upload:  ruleplane %.2f s / (etcdctl save + aws cp) %.2f s = %.2fx   goal <= %.1fx: %s",
                upload.seconds, baseline.seconds, upload_ratio, kTimeGoal,
                Verdict(upload_ratio <= kTimeGoal));
  std::cout << line << std::endl;
  std::snprintf(line, sizeof line,
                "restore: ruleplane %.2f s / (aws cp + etcdctl restore) %.2f s = %.2fx   goal <= %.1fx: %s",
                restore.seconds, baseline_restore.seconds, restore_ratio, kTimeGoal,
                Verdict(restore_ratio <= kTimeGoal));
  std::cout << line << std::endl;
  std::snprintf(
      line, sizeof line,
      "memory:  ruleplane backup full's own peak %.1f MiB, the restore's download %.1f MiB (largest "
      "of any run)   goal < %.0f MiB: %s",
      upload_peak, download_peak, kMemoryGoalMiB,
      Verdict(upload_peak < kMemoryGoalMiB && download_peak < kMemoryGoalMiB));
  std::cout << line << std::endl;
  std::snprintf(
      line, sizeof line,
      "         (the etcdctl snapshot status it runs: %.1f MiB, %.1f MiB of it anonymous, the rest the "
      "database file mapped; baseline peaks: etcdctl save %.1f, aws %.1f / %.1f MiB up / down; %.0f MB "
      "snapshot)",
      figures.status.Median().own_peak_mib, figures.status.Median().own_anon_mib,
      figures.etcdctl_save.Median().own_peak_mib, figures.aws_upload.Median().own_peak_mib,
      figures.aws_download.Median().own_peak_mib, static_cast<double>(snapshot_bytes) / kBytesPerMB);
  std::cout << line << std::endl;
}

Status Run(const std::string& root, int64_t target_megabytes, int runs, const std::string& ruleplane) {
  for (const std::string& directory : {root + "/logs", root + "/scratch", root + "/credentials"})
    fs::create_directories(directory);
  Setup setup;
  setup.root = root;
  // A copy: a build tree others share may relink the binary during the run.
  setup.ruleplane = root + "/ruleplane";
  std::error_code copy_error;
  fs::copy_file(ruleplane, setup.ruleplane, fs::copy_options::overwrite_existing, copy_error);
  if (copy_error) return BenchError("cannot copy " + ruleplane + ": " + copy_error.message());
  if (auto help = RunCommand({setup.ruleplane, "backup", "--help"}, std::chrono::seconds(30));
      !help.ok() || help->exit_code != 0)
    return BenchError(ruleplane + " (copied to " + setup.ruleplane + ") does not run `backup --help`");
  setup.credentials = root + "/credentials";
  for (const auto& [file, content] :
       std::vector<std::pair<std::string, std::string>>{{"accessKeyID", "S3RVER"},
                                                        {"secretAccessKey", "S3RVER"},
                                                        {"region", "us-east-1"},
                                                        {"s3ForcePathStyle", "true"}}) {
    std::ofstream(setup.credentials + "/" + file) << content;
  }

  auto server = testing::S3Server::Start(root, {kBucket});
  if (!server.ok()) return server.error();
  setup.s3_endpoint = (*server)->endpoint();
  setup.watched.s3rver = (*server)->pid();
  auto source = StartSourceMember(root);
  if (!source.ok()) return source.error();
  setup.etcd_endpoint = source->client_url;
  setup.watched.etcd = source->process.pid();
  setup.peer_url = LoopbackUrl(FreeLoopbackPort());
  setup.aws = FindAwsCli(root, setup.s3_endpoint);
  if (setup.aws.aws.empty() && setup.aws.python.empty())
    return BenchError("neither aws nor a python3 with boto3 is installed");

  EtcdClientConfig config;
  config.endpoints = {setup.etcd_endpoint};
  EtcdClient client(config);
  const auto fill_start = Clock::now();
  auto filled = Fill(client, setup.etcd_endpoint, target_megabytes * static_cast<int64_t>(kBytesPerMB));
  if (!filled.ok()) return filled.error();
  char heading[400];
  std::snprintf(heading, sizeof heading,
                "database: %.1f MB, revision %lld (filled in %.1f s); %d run%s per figure, each its median; "
                "MB = 10^6 bytes, MiB = 2^20",
                static_cast<double>(filled->db_size) / kBytesPerMB, static_cast<long long>(filled->revision),
                SecondsSince(fill_start), runs, runs == 1 ? "" : "s");
  std::cout << heading << std::endl;
  std::cout << "server: s3rver (Node.js) on loopback, pid " << setup.watched.s3rver
            << "; baseline client: " << setup.aws.Describe() << "; ruleplane: " << ruleplane
            << " (run from a copy)" << std::endl;

  Figures figures;
  int64_t snapshot_bytes = 0, gzip_bytes = 0;
  for (int run = 0; run < runs; ++run) {
    if (Status measured = MeasureRun(setup, run, figures, snapshot_bytes, gzip_bytes); !measured.ok())
      return measured;
  }

  std::cout
      << "\npeak MiB: the process's own VmHWM; tree MiB: wait4's ru_maxrss (it or a child it waited "
         "for); CPU s: its and its children's;\ns3rver s, etcd s: the CPU time s3rver and the source etcd "
         "spent meanwhile. MB/s over the snapshot's "
      << snapshot_bytes << " bytes.\n"
      << std::endl;
  PrintHeader();
  PrintFigure("upload", "ruleplane backup full --storage-provider S3", figures.upload.Median(),
              snapshot_bytes);
  PrintFigure("upload", "  the same into a Local store (snapshot + checks, no upload)",
              figures.local.Median(), snapshot_bytes);
  PrintFigure("upload", "    of which etcdctl snapshot status (its revision check)", figures.status.Median(),
              snapshot_bytes);
  PrintFigure("upload", "ruleplane backup full --storage-provider S3 --compression gzip",
              figures.upload_gzip.Median(), snapshot_bytes);
  PrintFigure("upload", "baseline: etcdctl snapshot save + " + setup.aws.Name(),
              figures.baseline_upload.Median(), snapshot_bytes);
  PrintFigure("upload", "  etcdctl snapshot save", figures.etcdctl_save.Median(), snapshot_bytes);
  PrintFigure("upload", "  " + setup.aws.Name() + " upload", figures.aws_upload.Median(), snapshot_bytes);
  PrintFigure("restore", "ruleplane ReadSnapshotToFile + etcdctl snapshot restore", figures.restore.Median(),
              snapshot_bytes);
  PrintFigure("restore", "  ReadSnapshotToFile from S3 (child process)", figures.download.Median(),
              snapshot_bytes);
  PrintFigure("restore", "  ReadSnapshotToFile of the gzip snapshot", figures.download_gzip.Median(),
              snapshot_bytes);
  PrintFigure("restore", "  etcdctl snapshot restore", figures.etcdctl_restore.Median(), snapshot_bytes);
  PrintFigure("restore", "baseline: " + setup.aws.Name() + " + etcdctl snapshot restore",
              figures.baseline_restore.Median(), snapshot_bytes);
  PrintFigure("restore", "  " + setup.aws.Name() + " download", figures.aws_download.Median(),
              snapshot_bytes);
  PrintFigure("restore", "  etcdctl snapshot restore", figures.etcdctl_restore_baseline.Median(),
              snapshot_bytes);
  std::cout << "\ngzip object: " << gzip_bytes
            << " bytes (the values are random: gzip shrinks only bbolt's page slack); s3rver's own peak "
            << "over the whole run: " << ProcessStatusKiB(setup.watched.s3rver, "VmHWM") / 1024 << " MiB\n"
            << std::endl;
  PrintSummary(figures, snapshot_bytes);

  source->process.Stop(std::chrono::seconds(10));
  (*server)->Stop();
  return {};
}

// The restore's child: the snapshot from the S3 store into a file.
int RestoreChildMain(int argc, char** argv) {
  if (argc != 8) {
    std::cerr
        << "usage: s3_backup_bench --restore-child ENDPOINT CREDENTIALS PREFIX NAME DESTINATION SCRATCH\n";
    return 2;
  }
  StoreConfig config;
  config.provider = "S3";
  config.container = kBucket;
  config.endpoint_override = argv[2];
  config.credentials = argv[3];
  config.prefix = argv[4];
  config.scratch_directory = argv[7];
  auto objects = OpenObjectStore(config);
  if (!objects.ok()) {
    std::cerr << objects.error().message << "\n";
    return 1;
  }
  BackupStore store(std::move(*objects));
  if (Status read = store.ReadSnapshotToFile(argv[5], argv[6]); !read.ok()) {
    std::cerr << read.error().message << "\n";
    return 1;
  }
  return 0;
}

void OnSignal(int) {
  stopping = true;
  if (const pid_t child = running_child; child > 0) kill(child, SIGKILL);
}

}  // namespace
}  // namespace ruleplane

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == ruleplane::kRestoreChild)
    return ruleplane::RestoreChildMain(argc, argv);
  std::string ruleplane_binary = testing::RuleplaneBinary();
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--ruleplane" && i + 1 < argc) {
      ruleplane_binary = argv[++i];
    } else {
      positional.push_back(arg);
    }
  }
  int64_t target_megabytes = 1000;
  int runs = 0;
  if (positional.size() > 2 ||
      (!positional.empty() && (target_megabytes = std::atoll(positional[0].c_str())) <= 0) ||
      (positional.size() == 2 && (runs = std::atoi(positional[1].c_str())) <= 0)) {
    std::cerr
        << "usage: s3_backup_bench [MB [RUNS]] [--ruleplane PATH]   (default 1000 MB; 3 runs up to 300 MB, "
           "1 above)\n";
    return 2;
  }
  if (runs == 0) runs = target_megabytes <= 300 ? 3 : 1;
  setenv("ETCDCTL_API", "3", 1);
  struct sigaction action {};
  action.sa_handler = ruleplane::OnSignal;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  ruleplane::WorkDirectory directory;
  if (directory.path().empty()) {
    std::cerr << "s3_backup_bench: cannot create a temporary directory\n";
    return 1;
  }
  if (ruleplane::Status done = ruleplane::Run(directory.path(), target_megabytes, runs, ruleplane_binary);
      !done.ok()) {
    std::cerr << "s3_backup_bench: " << done.error().message << "\n";
    return 1;
  }
  return 0;
}
