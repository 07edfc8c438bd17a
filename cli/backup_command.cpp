// ruleplane backup full|delta: one backup into a backup store (Local or
// S3) in etcd-backup-restore's layout; member-agent schedules them.
#include <atomic>
#include <csignal>
#include <iostream>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/output_format.h"
#include "cli/store_flags.h"
#include "member/backup_taker.h"

namespace ruleplane::cli {
namespace {

constexpr const char* kBackupUsage =
    R"(usage: ruleplane backup full|delta --endpoints URL[,URL] (--backup-store DIR | --storage-provider ...)
                        [--cacert FILE --cert FILE --key FILE] [--compression gzip|zlib|none]
                        [--timeout SECONDS] [--dry-run]

Takes one backup from the cluster into the store, in etcd-backup-restore's
layout (<prefix>/v2/Full-<start>-<last>-<unix>, <prefix>/v2/Incr-...),
written whole or not at all.

  full    etcd's snapshot stream from the first endpoint that answers, its
          SHA-256 verified, named by the revision the file holds
  delta   the watch events since the store's latest snapshot, up to the
          cluster's current revision, in etcd-backup-restore's delta format;
          nothing when the cluster has not moved

--dry-run prints the requests it would send and writes nothing. SIGTERM or
SIGINT stops a backup in progress: its partial download is removed and
nothing is stored (exit 1). A delta that ruleplane's replay would refuse
(events out of order, without a revision, outside its range) is not stored.
Store entries skipped by the listing (symbolic links, unreadable entries,
names beyond the cluster's revision) are reported on standard error.
Exit codes: 0 taken (or nothing to take), 1 it failed, 2 bad usage.

)";

// Lock-free, so safe to set from the signal handler; the client's cancel flag.
std::atomic<bool> backup_stopping{false};
static_assert(std::atomic<bool>::is_always_lock_free);

// SIGTERM and SIGINT cancel the transfer in progress while it lives (so that
// the partial download is removed), then the previous handlers come back.
class StopOnSignal {
 public:
  StopOnSignal() {
    backup_stopping = false;
    previous_term_ = std::signal(SIGTERM, [](int) { backup_stopping = true; });
    previous_int_ = std::signal(SIGINT, [](int) { backup_stopping = true; });
  }
  ~StopOnSignal() {
    std::signal(SIGTERM, previous_term_);
    std::signal(SIGINT, previous_int_);
  }
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

 private:
  void (*previous_term_)(int) = SIG_DFL;
  void (*previous_int_)(int) = SIG_DFL;
};

}  // namespace

int RunBackup(const Args& args, std::ostream& out, std::ostream& err) {
  if (HelpRequested(args)) return PrintUsage(kBackupUsage, out);
  if (args.empty() || (args[0] != "full" && args[0] != "delta")) {
    err << kBackupUsage;
    return kExitUsage;
  }
  const std::string usage = std::string(kBackupUsage) + kStoreFlagsUsage;
  Flags flags(WithStoreFlags({{"--endpoints"},
                              {"--cacert"},
                              {"--cert"},
                              {"--key"},
                              {"--compression"},
                              {"--timeout"},
                              {"--dry-run", false}}));
  if (!flags.Parse(Args(args.begin() + 1, args.end()), err, usage)) return kExitUsage;
  if (!flags.Require({"--endpoints"}, err, usage)) return kExitUsage;
  StoreConfig store_config;
  if (!StoreGiven(flags)) {
    err << "ruleplane: a backup store is required (--backup-store or --storage-provider)\n" << usage;
    return kExitUsage;
  }
  if (!StoreConfigFromFlags(flags, store_config, err)) return kExitUsage;

  BackupOptions options;
  const std::string compression = flags.Get("--compression", "none");
  if (compression == "gzip") {
    options.compression_suffix = ".gz";
  } else if (compression == "zlib") {
    options.compression_suffix = ".zlib";
  } else if (compression != "none") {
    // lzw (".Z") backups of etcd-backup-restore are read, not written.
    err << "ruleplane: --compression must be gzip, zlib or none\n";
    return kExitUsage;
  }
  int64_t timeout_seconds = std::chrono::duration_cast<std::chrono::seconds>(options.timeout).count();
  if (!flags.GetCount("--timeout", timeout_seconds, err)) return kExitUsage;
  options.timeout = std::chrono::seconds(timeout_seconds);

  EtcdClientConfig config;
  if (!flags.GetUrls("--endpoints", config.endpoints, err)) return kExitUsage;
  config.tls = TlsFromFlags(flags);
  EtcdClient client(config);
  const StopOnSignal stop_on_signal;
  client.set_cancel(&backup_stopping);
  auto opened = OpenBackupStore(store_config);
  if (!opened.ok()) {
    err << "ruleplane: backup " << args[0] << ": " << opened.error().message << "\n";
    return kExitUsage;
  }
  BackupStore& store = **opened;
  RequestLog log(flags.Has("--dry-run"));

  const bool full = args[0] == "full";
  auto taken =
      full ? TakeFullBackup(client, store, options, log) : TakeDeltaBackup(client, store, options, log);
  if (log.dry_run()) {
    for (const Request& request : log.requests()) out << DescribeRequest(request) << "\n";
  }
  if (taken.ok()) {
    for (const std::string& warning : taken->warnings)
      err << "ruleplane: backup " << args[0] << ": warning: " << Printable(warning) << "\n";
  }
  if (!taken.ok()) {
    err << "ruleplane: backup " << args[0] << ": " << taken.error().message << "\n";
    return kExitFinding;
  }
  if (log.dry_run()) {
    out << "dry run: nothing was written\n";
  } else if (taken->name.empty()) {
    out << "nothing to back up: the store is at the cluster's revision\n";
  } else {
    out << taken->name << "  revision " << taken->revision;
    if (!full) out << "  " << taken->events << " events";
    out << "\n";
  }
  return out ? kExitOk : kExitUsage;
}

}  // namespace ruleplane::cli
