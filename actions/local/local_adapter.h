// LocalAdapter: the actions a member performs on its own files before etcd
// starts (the catalogue's `adapter: local` actions of the initialization
// tables): write or reuse the etcd configuration, move the data directory
// aside, restore a full snapshot, apply incremental snapshots, take a full
// snapshot into the backup store, abort the initialization.
//
// Data is never deleted: ResetDataDir renames the directory aside, a restore
// goes to a temporary directory and is renamed into place, the backup store
// writes a temporary file, fsyncs and renames.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "actions/adapter.h"
#include "adapters/etcd/etcd_client.h"
#include "adapters/local/backup_store.h"
#include "adapters/local/local_member.h"

namespace ruleplane {

class LocalAdapter : public Adapter {
 public:
  // `cluster` (may be null) is read when a joining member's configuration is
  // written: see InitialClusterFor.
  LocalAdapter(LocalMember member, BackupStore* store, EtcdClient* cluster);

  std::string_view kind() const override { return "local"; }
  Result<bool> IsDone(const PlanStep& step, RequestLog& log) override;
  Status Perform(const PlanStep& step, RequestLog& log) override;

 private:
  Status GenerateConfig(const PlanStep& step, RequestLog& log);
  // The volume's safe_guard file (SafeGuardPath) naming this member's
  // namespace, as etcd-backup-restore's initializer writes it, when there is
  // none: a volume mounted later into another namespace's Etcd is then refused
  // (the rules' wrong-volume decisions). Before the configuration, so that a
  // start always leaves it.
  Status WriteSafeGuard(RequestLog& log);
  // ReuseEtcdConfig's configuration: the template rendered again, so that a
  // changed template (peer TLS set on the Etcd) reaches a member restarting
  // on its data, with the initial cluster and state of its previous start
  // (etcd ignores both beside a WAL).
  Result<std::string> ReusedConfig(const PlanStep& step) const;
  // The initial-cluster a GenerateEtcdConfig step writes. For "new", the
  // step's. For "existing", the cluster's members as the member list shows
  // them now (after AddMember): etcd 3.4 refuses to join when the count
  // differs ("member count is unequal"), which the template's n peers do
  // while the cluster is being rebuilt one member at a time.
  Result<std::string> InitialClusterFor(const PlanStep& step, RequestLog& log);
  Status ResetDataDir(RequestLog& log);
  Status RestoreFullSnapshot(const PlanStep& step, RequestLog& log);
  Status ApplyIncrementalSnapshots(const PlanStep& step, RequestLog& log);
  Status TakeFullSnapshot(RequestLog& log);
  Result<int64_t> DataDirRevision() const;

  LocalMember member_;
  BackupStore* store_;
  EtcdClient* cluster_;
};

// The etcd configuration file for `member` from its template: name, data-dir,
// initial-cluster, initial-cluster-state, advertised URLs set, the rest
// (TLS files, listen URLs, quotas) as the template has it; the v3 JSON
// gateway enabled, which ruleplane's etcd adapter needs.
Result<std::string> RenderEtcdConfig(const std::string& template_yaml, const LocalMember& member,
                                     const std::string& initial_cluster,
                                     const std::string& initial_cluster_state);

}  // namespace ruleplane
