// ApplyIncrementalSnapshots (snapshots): the backup store's deltas replayed
// in order into a single-node etcd started on the data directory (one
// transaction per source revision, without leases), each revision checked
// against the data's before its transaction; never deltas marked as taken
// from another cluster than the full snapshot below them or each other
// (backup_store.h). Done when the data directory holds the last delta's
// revision.
#include <algorithm>
#include <chrono>

#include "actions/local/local_action_handler.h"
#include "adapters/local/delta_file.h"
#include "adapters/local/loopback_etcd.h"
#include "platform/failure_point.h"

namespace ruleplane {
namespace {

Error IoError(std::string message) { return Error{ErrorCode::kIo, std::move(message), {}}; }

// Done when the database holds the last delta's revision (nothing to apply: done).
Result<bool> IsDone(const PlanStep& step, LocalActionContext& context, RequestLog& /*log*/) {
  const Value* names = step.params.Find("snapshots");
  if (names == nullptr || !names->is_list() || names->list_value().empty()) return true;
  return DataDirHoldsSnapshot(context, names->list_value().back().string_value());
}

Status Perform(const PlanStep& step, LocalActionContext& context, RequestLog& log) {
  if (context.store == nullptr)
    return Error{ErrorCode::kFailedPrecondition, "no backup store is configured", {}};
  const LocalMember& member = context.member;
  BackupStore& store = *context.store;
  std::vector<std::string> names;
  if (const Value* list = step.params.Find("snapshots"); list != nullptr && list->is_list()) {
    for (const Value& item : list->list_value()) names.push_back(item.string_value());
  }
  auto listing = store.List();
  if (!listing.ok()) return listing.error();
  // The deltas and the full snapshot they continue (the newest below the
  // first of them): one cluster's history. A delta not listed is kNotFound below.
  std::vector<StoredSnapshot> chain;
  for (const StoredSnapshot& candidate : listing->snapshots) {
    if (std::find(names.begin(), names.end(), candidate.name) != names.end()) chain.push_back(candidate);
  }
  if (!chain.empty()) {
    const int64_t start = chain.front().start_revision;
    const StoredSnapshot* base = nullptr;
    for (const StoredSnapshot& candidate : listing->snapshots) {
      if (candidate.kind == "Full" && candidate.last_revision < start) base = &candidate;
    }
    if (base != nullptr) chain.insert(chain.begin(), *base);
  }
  if (auto one = ChainCluster(chain); !one.ok()) return one.error();

  auto etcd = StartLoopbackEtcd(member.name, member.data_dir, member.data_dir + ".replay.log", log);
  if (!etcd.ok()) return etcd.error();
  int64_t revision = etcd->revision;
  EtcdClient client_api(EtcdClientConfig{{etcd->client_url}, {}, std::chrono::seconds(10)});
  for (const std::string& name : names) {
    const StoredSnapshot* delta = nullptr;
    for (const StoredSnapshot& candidate : listing->snapshots) {
      if (candidate.name == name) delta = &candidate;
    }
    if (delta == nullptr) return Error{ErrorCode::kNotFound, "the backup store has no snapshot " + name, {}};
    if (!log.dry_run() && revision >= delta->last_revision) continue;  // applied before an interruption
    auto bytes = store.ReadSnapshot(name);
    if (!bytes.ok()) return bytes.error();
    auto events = ParseDelta(*bytes);
    if (!events.ok()) return Error{events.error().code, name + ": " + events.error().message, {}};
    // One transaction per source revision, without leases: a lease that
    // expires during the replay must not drop an event (etcd-backup-restore's
    // applier also puts without leases).
    for (const auto& group : GroupByRevision(*events)) {
      if (!log.dry_run() && group.revision <= revision) continue;
      // Checked before the transaction commits: each source revision is one
      // transaction, so the next must be exactly one above the data's. A gap
      // (a delta missing from the store) would otherwise commit the events
      // at the wrong revision, and every later replay would build on them.
      if (!log.dry_run() && group.revision != revision + 1) {
        return Error{ErrorCode::kFailedPrecondition,
                     name + ": the data is at revision " + std::to_string(revision) +
                         " and the next event is at " + std::to_string(group.revision) +
                         ": a delta is missing; nothing was applied from it",
                     {}};
      }
      auto applied = client_api.Txn(group.events, log);
      if (!applied.ok()) return Error{applied.error().code, name + ": " + applied.error().message, {}};
      if (log.dry_run()) continue;
      revision = *applied;
      if (revision != group.revision) {
        return IoError(name + ": replaying source revision " + std::to_string(group.revision) +
                       " gave revision " + std::to_string(revision));
      }
    }
    if (!log.dry_run() && revision != delta->last_revision) {
      return IoError(name + ": after replay the revision is " + std::to_string(revision) +
                     ", the file's name says " + std::to_string(delta->last_revision));
    }
    FailPoint("local:after-delta-file");
  }
  etcd->process.Stop(std::chrono::seconds(30));
  return {};
}

}  // namespace

LocalActionHandler ApplyIncrementalSnapshotsHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
