// ruleplane compact: the compaction Job's command (CreateCompactionJob).
#include <iostream>

#include "adapters/etcd/etcd_client.h"
#include "adapters/kubernetes/agent_lease.h"
#include "cli/cluster_input.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/store_flags.h"
#include "engine/common/json_value.h"
#include "member/backup_compaction.h"

namespace ruleplane::cli {
namespace {

constexpr const char* kCompactUsage =
    R"(usage: ruleplane compact (--backup-store DIR | --storage-provider ...) --data-dir DIR
                         [--compression gzip|zlib|none] [--timeout SECONDS] [--cluster-id HEX]
                         [--max-revision N]
                         [--full-snapshot-lease NAME [--namespace NS] [--kubeconfig FILE] [--context NAME]]

Compacts the backups as etcd-backup-restore's compaction job does: restores
the store's newest full snapshot and the deltas after it into an etcd of its
own on 127.0.0.1 (under --data-dir, a work directory; a copy left there by an
interrupted run is replaced), compacts its history to the last revision,
defragments it, and stores the result as a new full snapshot at that
revision (compressed with --compression, default gzip). The snapshots in the
store are only read.
With --cluster-id (the etcd cluster's ID in hex, as its members answer),
snapshots marked as another cluster's are skipped: a history another cluster
appended to the same prefix (a split brain, an Etcd created again under the
same name) is neither compacted nor counted. With --max-revision (the
cluster's revision when the compaction was decided), snapshots beyond it are
skipped as strays. Both are left alone.
With --full-snapshot-lease, the Lease (etcd-druid's <etcd>-full-snap) then
holds the newest full snapshot's revision (the new one's), so that the
controller counts the events since it, and names it
(ruleplane.dev/compacted-full): the members' garbage collection keeps the
deltas it replaced until a member's own full snapshot is newer. Nothing to
compact (no delta after the newest full snapshot) is not an error. One JSON
line on standard output: snapshot ("" when nothing was compacted), revision,
deltas, databaseBytesBefore, databaseBytesAfter.
Exit codes: 0 compacted (or nothing to compact), 1 it failed (nothing stored),
2 bad usage.

)";

}  // namespace

int RunCompact(const Args& args, std::ostream& out, std::ostream& err) {
  if (HelpRequested(args)) return PrintUsage(kCompactUsage, out);
  const std::string usage = std::string(kCompactUsage) + kStoreFlagsUsage;
  Flags flags(WithStoreFlags({{"--data-dir"},
                              {"--compression"},
                              {"--timeout"},
                              {"--cluster-id"},
                              {"--max-revision"},
                              {"--full-snapshot-lease"},
                              {"--namespace"},
                              {"--kubeconfig"},
                              {"--context"}}));
  if (!flags.Parse(args, err, usage)) return kExitUsage;
  if (!flags.Require({"--data-dir"}, err, usage)) return kExitUsage;
  if (!StoreGiven(flags)) {
    err << "ruleplane: compact: a backup store is required (--backup-store or --storage-provider)\n" << usage;
    return kExitUsage;
  }
  StoreConfig store_config;
  if (!StoreConfigFromFlags(flags, store_config, err)) return kExitUsage;
  CompactionOptions options;
  options.work_dir = flags.Get("--data-dir");
  const std::string compression = flags.Get("--compression", "gzip");
  if (compression == "gzip" || compression == "zlib") {
    options.compression_suffix = compression == "gzip" ? ".gz" : ".zlib";
  } else if (compression == "none") {
    options.compression_suffix.clear();
  } else {
    err << "ruleplane: compact: --compression must be gzip, zlib or none\n";
    return kExitUsage;
  }
  int64_t timeout_seconds = std::chrono::duration_cast<std::chrono::seconds>(options.command_timeout).count();
  if (!flags.GetCount("--timeout", timeout_seconds, err)) return kExitUsage;
  options.command_timeout = std::chrono::seconds(timeout_seconds);
  if (const std::string cluster = flags.Get("--cluster-id"); !cluster.empty()) {
    auto cluster_id = ParseMemberIdHex(cluster);
    if (!cluster_id.ok() || *cluster_id == 0) {
      err << "ruleplane: compact: --cluster-id must be an etcd cluster ID in hex, not '" << cluster << "'\n";
      return kExitUsage;
    }
    options.cluster_id = *cluster_id;
  }
  if (flags.Has("--max-revision")) {
    int64_t max_revision = 0;
    if (!flags.GetCount("--max-revision", max_revision, err)) return kExitUsage;
    options.max_revision = max_revision;
  }

  // The Lease's API server is resolved before anything is compacted, so that
  // a bad --kubeconfig costs no restore.
  std::optional<KubeClient> kube;
  std::string namespace_name;
  const std::string lease = flags.Get("--full-snapshot-lease");
  if (!lease.empty()) {
    auto config = ResolveKubeConfig(flags.Get("--kubeconfig"), flags.Get("--context"));
    if (!config.ok()) {
      err << "ruleplane: compact: " << config.error().message << "\n";
      return kExitUsage;
    }
    namespace_name = flags.Get("--namespace", config->namespace_name);
    kube.emplace(*config);
  }
  auto store = OpenBackupStore(store_config);
  if (!store.ok()) {
    err << "ruleplane: compact: " << store.error().message << "\n";
    return kExitUsage;
  }
  RequestLog log;
  auto compacted = CompactBackups(**store, options, log);
  if (!compacted.ok()) {
    err << "ruleplane: compact: " << compacted.error().message << "\n";
    return kExitFinding;
  }
  // Also when nothing was compacted: a run that stored its snapshot and was
  // killed before the Lease would otherwise leave the controller counting
  // the events since the previous one, starting a Job after Job.
  if (kube) {
    constexpr int64_t kLeaseSeconds = 60;
    LeaseAnnotations annotations;
    if (!compacted->snapshot.empty()) annotations.emplace_back(kCompactedFullAnnotation, compacted->snapshot);
    if (Status renewed = RenewAgentLease(*kube, namespace_name, lease, std::to_string(compacted->revision),
                                         std::chrono::system_clock::now(), kLeaseSeconds, -1, annotations);
        !renewed.ok()) {
      err << "ruleplane: compact: stored " << compacted->snapshot << ", but the Lease " << lease << ": "
          << renewed.error().message << "\n";
      return kExitFinding;
    }
  }
  out << FormatJson(Value::MakeMap({
             {Value::String("snapshot"), Value::String(compacted->snapshot)},
             {Value::String("revision"), Value::Int(compacted->revision)},
             {Value::String("deltas"), Value::Int(static_cast<int64_t>(compacted->deltas))},
             {Value::String("databaseBytesBefore"), Value::Int(compacted->database_bytes_before)},
             {Value::String("databaseBytesAfter"), Value::Int(compacted->database_bytes_after)},
         }))
      << "\n";
  return kExitOk;
}

}  // namespace ruleplane::cli
