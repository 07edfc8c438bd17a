#include "adapters/kubernetes/object_cache.h"

#include <set>

namespace ruleplane {
namespace {

std::string Text(const Value& object, std::string_view section, std::string_view field) {
  const Value* part = object.is_map() ? object.Find(section) : nullptr;
  const Value* value = part != nullptr && part->is_map() ? part->Find(field) : nullptr;
  return value != nullptr && value->is_string() ? value->string_value() : "";
}

std::string KeyOf(const Value& object) {
  return Text(object, "metadata", "namespace") + "/" + Text(object, "metadata", "name");
}

// The uids of the object's ownerReferences.
std::vector<std::string> OwnerUids(const Value& object) {
  std::vector<std::string> uids;
  const Value* metadata = object.is_map() ? object.Find("metadata") : nullptr;
  const Value* owners =
      metadata != nullptr && metadata->is_map() ? metadata->Find("ownerReferences") : nullptr;
  if (owners == nullptr || !owners->is_list()) return uids;
  for (const Value& owner : owners->list_value()) {
    const Value* uid = owner.is_map() ? owner.Find("uid") : nullptr;
    if (uid != nullptr && uid->is_string()) uids.push_back(uid->string_value());
  }
  return uids;
}

constexpr std::chrono::seconds kWatchTimeout{300};
constexpr std::chrono::seconds kRetryDelay{1};

}  // namespace

ObjectCache::ObjectCache(KubeConfig config, std::vector<CachedKind> kinds, ChangeHandler on_change)
    : config_(std::move(config)), kinds_(std::move(kinds)), on_change_(std::move(on_change)) {}

ObjectCache::~ObjectCache() { Stop(); }

void ObjectCache::Start() {
  for (const CachedKind& kind : kinds_) threads_.emplace_back([this, &kind] { Follow(kind); });
}

void ObjectCache::Stop() {
  stopping_ = true;
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  threads_.clear();
}

bool ObjectCache::WaitForSync(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return synced_changed_.wait_for(lock, timeout, [&] { return kinds_synced_ == kinds_.size(); });
}

bool ObjectCache::synced() const {
  std::lock_guard lock(mutex_);
  return kinds_synced_ == kinds_.size();
}

std::optional<Value> ObjectCache::Get(const std::string& plural, const std::string& namespace_name,
                                      const std::string& name) const {
  std::lock_guard lock(mutex_);
  auto kind = objects_.find(plural);
  if (kind == objects_.end()) return std::nullopt;
  auto found = kind->second.find(namespace_name + "/" + name);
  if (found == kind->second.end()) return std::nullopt;
  return found->second;
}

std::vector<Value> ObjectCache::List(const std::string& plural, const std::string& namespace_name) const {
  std::lock_guard lock(mutex_);
  std::vector<Value> result;
  auto kind = objects_.find(plural);
  if (kind == objects_.end()) return result;
  for (const auto& [key, object] : kind->second) {
    if (namespace_name.empty() || key.compare(0, namespace_name.size() + 1, namespace_name + "/") == 0) {
      result.push_back(object);
    }
  }
  return result;
}

std::vector<Value> ObjectCache::ListOwnedBy(const std::string& plural, const std::string& namespace_name,
                                            const std::string& owner_uid) const {
  std::lock_guard lock(mutex_);
  std::vector<Value> result;
  auto kind = owned_.find(plural);
  auto objects = objects_.find(plural);
  if (kind == owned_.end() || objects == objects_.end()) return result;
  auto owned = kind->second.find(owner_uid);
  if (owned == kind->second.end()) return result;
  for (const std::string& key : owned->second) {
    if (namespace_name.empty() || key.compare(0, namespace_name.size() + 1, namespace_name + "/") == 0) {
      result.push_back(objects->second.at(key));
    }
  }
  return result;
}

ObjectCache::Counters ObjectCache::counters() const {
  std::lock_guard lock(mutex_);
  return counters_;
}

void ObjectCache::Store(const std::string& plural, const std::string& type, const Value& object) {
  {
    std::lock_guard lock(mutex_);
    const std::string key = KeyOf(object);
    std::map<std::string, Value>& objects = objects_[plural];
    std::map<std::string, std::set<std::string>>& by_owner = owned_[plural];
    if (auto kept = objects.find(key); kept != objects.end()) {
      for (const std::string& uid : OwnerUids(kept->second)) {
        auto owned = by_owner.find(uid);
        if (owned == by_owner.end()) continue;
        owned->second.erase(key);
        if (owned->second.empty()) by_owner.erase(owned);
      }
    }
    if (type == "DELETED") {
      objects.erase(key);
    } else {
      objects[key] = object;
      for (const std::string& uid : OwnerUids(object)) by_owner[uid].insert(key);
    }
  }
  on_change_(plural, object);
}

// Lists the kind and replaces what the cache held of it (objects gone since
// are reported deleted); the list's resourceVersion, or "" after a failure.
std::string ObjectCache::Relist(KubeClient& client, const CachedKind& kind) {
  RequestLog log;
  auto list = client.List(kind.collection, kind.label_selector, log);
  {
    std::lock_guard lock(mutex_);
    ++counters_.lists;
  }
  if (!list.ok()) return "";
  const std::string& plural = kind.collection.plural;
  const Value* items = list->Find("items");
  // A list's items carry no apiVersion and kind; watch events' objects do.
  const Value* list_kind = list->Find("kind");
  std::string item_kind = list_kind != nullptr && list_kind->is_string() ? list_kind->string_value() : "";
  if (item_kind.size() > 4 && item_kind.compare(item_kind.size() - 4, 4, "List") == 0)
    item_kind.resize(item_kind.size() - 4);
  std::set<std::string> listed;
  if (items != nullptr && items->is_list()) {
    for (const Value& item : items->list_value()) {
      listed.insert(KeyOf(item));
      Value::Map fields = {{Value::String("apiVersion"), Value::String(kind.collection.api_version)},
                           {Value::String("kind"), Value::String(item_kind)}};
      for (const auto& [key, value] : item.map_value()) {
        if (key.string_value() != "apiVersion" && key.string_value() != "kind")
          fields.emplace_back(key, value);
      }
      Store(plural, "ADDED", Value::MakeMap(std::move(fields)));
    }
  }
  std::vector<Value> gone;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [key, object] : objects_[plural]) {
      if (listed.count(key) == 0) gone.push_back(object);
    }
  }
  for (const Value& object : gone) Store(plural, "DELETED", object);
  const std::string version = Text(*list, "metadata", "resourceVersion");
  return version.empty() ? "0" : version;
}

void ObjectCache::Follow(const CachedKind& kind) {
  KubeClient client(config_);
  client.set_cancel(&stopping_);
  bool counted = false;
  std::string version;
  while (!stopping_) {
    if (version.empty()) {
      version = Relist(client, kind);
      if (version.empty()) {
        std::this_thread::sleep_for(kRetryDelay);
        continue;
      }
      if (!counted) {
        counted = true;
        std::lock_guard lock(mutex_);
        ++kinds_synced_;
        synced_changed_.notify_all();
      }
    }
    {
      std::lock_guard lock(mutex_);
      ++counters_.watches;
    }
    auto end = client.Watch(kind.collection, kind.label_selector, version, kWatchTimeout,
                            [&](const std::string& type, const Value& object) {
                              {
                                std::lock_guard lock(mutex_);
                                ++counters_.events;
                              }
                              if (type != "BOOKMARK") Store(kind.collection.plural, type, object);
                              return !stopping_.load();
                            });
    if (!end.ok()) {
      std::this_thread::sleep_for(kRetryDelay);  // the API server restarts, a connection drops: resume
      continue;
    }
    version = end->expired ? "" : end->resource_version;
  }
}

}  // namespace ruleplane
