// KubernetesActionContext: what the kubernetes action handlers
// (kubernetes_action_handler.h) share while one KubernetesAdapter performs
// one plan: the client, the snapshot the plan was
// made from, the objects as this plan's own writes left them, and the reads
// and writes several actions make.
//
// Fencing: every write carries the resourceVersion the plan was made from
// (the snapshot's objects); after its own successful write a handler keeps
// the version that write returned (Tracked), so the steps of one plan follow
// each other, and any other writer in between makes the next write fail with
// kConflict.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/kube_client.h"
#include "adapters/request.h"
#include "engine/common/error.h"
#include "engine/common/snapshot.h"
#include "engine/plan/plan.h"

namespace ruleplane {

class KubernetesActionContext {
 public:
  // `member_init_rules`: what the StatefulSet gives member-init as --rules (EtcdStatefulSet).
  KubernetesActionContext(KubeClient& client, const Snapshot& snapshot,
                          std::vector<std::string> member_init_rules = {});

  KubeClient& client() { return client_; }
  // The EtcdClusterSnapshot document the plan was made from.
  const Value& snapshot() const { return snapshot_; }
  const Value& observed_etcd() const;
  const std::string& namespace_name() const { return namespace_; }
  const std::string& etcd_name() const { return etcd_name_; }
  const std::vector<std::string>& member_init_rules() const { return member_init_rules_; }
  // What the compaction Job compacts: the history of the cluster a member
  // answered for while the plan ran (empty when none was asked or none
  // answered).
  const CompactionScope& compaction_scope() const { return compaction_scope_; }
  void set_compaction_scope(CompactionScope scope) { compaction_scope_ = std::move(scope); }

  // The object as this plan last saw it (observed, or returned by its own write).
  Value& Tracked(const std::string& key, const Value& observed);
  // The Etcd as this plan last saw it.
  Value& TrackedEtcd() { return Tracked("etcd", observed_etcd()); }
  // The StatefulSet as this plan last saw it; kFailedPrecondition when none was observed.
  Result<Value*> TrackedStatefulSet();

  Result<Value> FreshEtcd(RequestLog& log);
  // A merge patch of the Etcd's /status, fenced by its resourceVersion as
  // observed or as this plan's own last write left it.
  Status PatchEtcdStatus(const Value& status_patch, RequestLog& log);
  // A merge patch of the Etcd's metadata with these fields (annotations,
  // finalizers), fenced the same way.
  Status PatchEtcdMetadata(Value::Map fields, RequestLog& log);
  // kConflict unless the Etcd is the one observed, at the generation observed.
  Status CheckEtcdAsObserved(RequestLog& log);
  // Whether the Etcd was observed on its way out (a deletionTimestamp) and is
  // gone now: its teardown removed the finalizer, nothing is left to do for it
  // (what it owned goes with it, by its owner references).
  Result<bool> EtcdTornDown(RequestLog& log);

  // The uid of the object named `name` in the snapshot's `list` ("pods",
  // "leases"), or "" when it was not observed.
  std::string ObservedUid(std::string_view list, const std::string& name) const;
  Result<bool> Exists(const KubeResource& resource, RequestLog& log);
  // The object as the API server has it now; nullopt when there is none.
  Result<std::optional<Value>> Find(const KubeResource& resource, RequestLog& log);
  // Creates `object` in `collection`; one that exists already is left as it is.
  Status CreateUnlessPresent(const KubeResource& collection, const Value& object, RequestLog& log);

  // Rendered objects (apiVersion, kind, metadata.name) brought to what they
  // ask: each created when missing; one that `current` finds different gets
  // the merge patch `patch` makes of the two, fenced by the live one's
  // resourceVersion. A live object for which `refused` says why it is not
  // this Etcd's to change stops it there (kFailedPrecondition, that reason).
  // RenderedCurrent: whether each exists, is not refused and is current.
  using RenderedCheck = std::function<bool(const Value& rendered, const Value& live)>;
  using RenderedPatch = std::function<Value(const Value& rendered, const Value& live)>;
  using RenderedRefusal = std::function<std::string(const Value& rendered, const Value& live)>;
  Result<bool> RenderedCurrent(const Value::List& rendered, const RenderedCheck& current, RequestLog& log,
                               const RenderedRefusal& refused = nullptr);
  Status ApplyRendered(const Value::List& rendered, const RenderedCheck& current, const RenderedPatch& patch,
                       RequestLog& log, const RenderedRefusal& refused = nullptr);
  // Whether the object observed with `observed_uid` is gone, replaced (another
  // uid) or on its way out (a deletionTimestamp).
  Result<bool> ObservedGone(const KubeResource& resource, const std::string& observed_uid, RequestLog& log);
  Result<bool> PodGone(const std::string& name, RequestLog& log) {
    return ObservedGone({"v1", "pods", namespace_, name, ""}, ObservedUid("pods", name), log);
  }
  // Deletes the object observed with `observed_uid`, that one only (a uid
  // precondition); kFailedPrecondition when it was not observed.
  Status DeleteObserved(const KubeResource& resource, const std::string& observed_uid, RequestLog& log,
                        std::string_view propagation_policy = "");

  // An Event on the Etcd about `step`.
  Status RecordEvent(const PlanStep& step, const std::string& type, const std::string& reason,
                     const std::string& message, RequestLog& log);
  // Whether an Event with this reason and message was recorded in the last hour.
  Result<bool> EventRecorded(const std::string& reason, const std::string& message, RequestLog& log);

 private:
  // A rendered object's resource, and the live object (nullopt when there is none).
  struct LiveObject {
    KubeResource resource;
    std::optional<Value> live;
  };
  Result<LiveObject> FindRendered(const Value& rendered, RequestLog& log);

  KubeClient& client_;
  Value snapshot_;
  std::string namespace_, etcd_name_;
  std::vector<std::string> member_init_rules_;
  CompactionScope compaction_scope_;
  std::map<std::string, Value> tracked_;
};

}  // namespace ruleplane
