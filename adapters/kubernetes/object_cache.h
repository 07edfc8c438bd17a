// ObjectCache: what a controller reads instead of the API server, as
// client-go's informers keep it. For each kind of object, on its own thread
// and connection: one List, then a Watch from the list's resourceVersion
// (with bookmarks); a watch the server ends is resumed from the last version
// seen, and an expired one (410 Gone) lists again. Every object that was
// added, changed or deleted is passed to `on_change`, so that the Etcd it
// belongs to can be queued; reads copy out of the cache under a lock.
//
//   ObjectCache cache(config, {{{"druid.gardener.cloud/v1alpha1", "etcds", ns, "", ""}, ""}, ...},
//                     [&](const std::string& plural, const Value& object) { ... });
//   cache.Start();
//   cache.WaitForSync(std::chrono::seconds(30));
//   std::optional<Value> etcd = cache.Get("etcds", ns, name);
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "adapters/kubernetes/kube_client.h"

namespace ruleplane {

struct CachedKind {
  KubeResource collection;     // its namespace "" = every namespace
  std::string label_selector;  // "" = every object
};

class ObjectCache {
 public:
  using ChangeHandler = std::function<void(const std::string& plural, const Value& object)>;

  ObjectCache(KubeConfig config, std::vector<CachedKind> kinds, ChangeHandler on_change);
  ~ObjectCache();  // stops
  ObjectCache(const ObjectCache&) = delete;
  ObjectCache& operator=(const ObjectCache&) = delete;

  void Start();
  void Stop();
  // Until every kind has been listed once.
  bool WaitForSync(std::chrono::milliseconds timeout);
  bool synced() const;

  std::optional<Value> Get(const std::string& plural, const std::string& namespace_name,
                           const std::string& name) const;
  // Every object of the kind in the namespace ("" = all), by name.
  std::vector<Value> List(const std::string& plural, const std::string& namespace_name) const;
  // The objects of the kind in the namespace with an ownerReference to
  // `owner_uid`, by name: an index lookup, so that observing one Etcd costs
  // the same among 5 or 5,000 (List and a filter cost every lease and pod of
  // the namespace).
  std::vector<Value> ListOwnedBy(const std::string& plural, const std::string& namespace_name,
                                 const std::string& owner_uid) const;

  // The API requests the cache made, for the controller's metrics.
  struct Counters {
    int64_t lists = 0;    // List calls (pages counted once)
    int64_t watches = 0;  // Watch requests
    int64_t events = 0;   // watch events received, bookmarks included
  };
  Counters counters() const;

 private:
  void Follow(const CachedKind& kind);
  std::string Relist(KubeClient& client, const CachedKind& kind);
  void Store(const std::string& plural, const std::string& type, const Value& object);

  KubeConfig config_;
  std::vector<CachedKind> kinds_;
  ChangeHandler on_change_;
  std::atomic<bool> stopping_{false};
  std::vector<std::thread> threads_;
  mutable std::mutex mutex_;
  std::condition_variable synced_changed_;
  // plural -> "namespace/name" -> object
  std::map<std::string, std::map<std::string, Value>> objects_;
  // plural -> owner uid -> "namespace/name" of the objects it owns
  std::map<std::string, std::map<std::string, std::set<std::string>>> owned_;
  size_t kinds_synced_ = 0;
  Counters counters_;
};

}  // namespace ruleplane
