#include "adapters/object_store/reopening_object_store.h"

#include <utility>

namespace ruleplane {

ReopeningObjectStore::ReopeningObjectStore(std::unique_ptr<ObjectStore> opened, std::string fingerprint,
                                           Opener open, Fingerprint read_fingerprint)
    : store_(std::move(opened)),
      fingerprint_(std::move(fingerprint)),
      open_(std::move(open)),
      read_fingerprint_(std::move(read_fingerprint)) {}

Status ReopeningObjectStore::Refresh(bool always) const {
  auto now = read_fingerprint_();
  if (!now.ok()) return now.error();
  if (!always && *now == fingerprint_) return {};
  auto opened = open_();
  if (!opened.ok()) return opened.error();
  store_ = std::move(*opened);
  fingerprint_ = std::move(*now);
  ++reopened_;
  return {};
}

template <typename Operation>
auto ReopeningObjectStore::Call(const Operation& operation, bool retry) const
    -> decltype(operation(std::declval<ObjectStore&>())) {
  // Unreadable credentials: the open store may still be let in.
  (void)Refresh(false);
  auto result = operation(*store_);
  if (result.ok() || result.error().code != ErrorCode::kPermissionDenied) return result;
  if (Status refreshed = Refresh(true); !refreshed.ok()) {
    Error refused = result.error();
    refused.message += " (the credentials could not be read again: " + refreshed.error().message + ")";
    return refused;
  }
  return retry ? operation(*store_) : result;
}

Result<ObjectListing> ReopeningObjectStore::List() const {
  return Call([](ObjectStore& store) { return store.List(); }, true);
}

Status ReopeningObjectStore::Read(const std::string& key, const ChunkSink& sink) const {
  return Call([&](ObjectStore& store) { return store.Read(key, sink); }, true);
}

Status ReopeningObjectStore::Write(const std::string& key, const ObjectProducer& produce) {
  return Call([&](ObjectStore& store) { return store.Write(key, produce); }, false);
}

Status ReopeningObjectStore::MoveFileIn(const std::string& path, const std::string& key) {
  return Call([&](ObjectStore& store) { return store.MoveFileIn(path, key); }, true);
}

Status ReopeningObjectStore::Delete(const std::string& key) {
  return Call([&](ObjectStore& store) { return store.Delete(key); }, true);
}

}  // namespace ruleplane
