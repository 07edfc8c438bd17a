// ReopeningObjectStore: an object store whose credentials can change while
// it is open: a rotated Secret that the kubelet updates in the mounted
// directory, a session token renewed beside it, a key pair replaced and the
// old one revoked. Before each operation it reads the credentials again and,
// when they differ from those it was opened with, opens the store anew with
// them; an operation the store refuses as unauthorized (401, 403:
// kPermissionDenied) opens it anew whatever the credentials say, and is tried
// once more, except a Write (its producer streams once). Otherwise a process
// that opened the store once would back up into nothing until it restarts.
//
//   auto store = std::make_unique<ReopeningObjectStore>(std::move(opened), fingerprint,
//                                                       [config] { return OpenOnce(config); },
//                                                       [config] { return Fingerprint(config); });
//
// Credentials that cannot be read at a check (a Secret in the middle of its
// update) leave the open store in use; the next operation checks again. One
// thread at a time, as any ObjectStore.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "adapters/object_store/object_store.h"

namespace ruleplane {

class ReopeningObjectStore : public ObjectStore {
 public:
  using Opener = std::function<Result<std::unique_ptr<ObjectStore>>()>;
  // What the credentials say now, compared as a whole.
  using Fingerprint = std::function<Result<std::string>()>;

  ReopeningObjectStore(std::unique_ptr<ObjectStore> opened, std::string fingerprint, Opener open,
                       Fingerprint read_fingerprint);

  std::string Location() const override { return store_->Location(); }
  std::string PrefixName() const override { return store_->PrefixName(); }
  Result<ObjectListing> List() const override;
  Status Read(const std::string& key, const ChunkSink& sink) const override;
  Status Write(const std::string& key, const ObjectProducer& produce) override;
  Status MoveFileIn(const std::string& path, const std::string& key) override;
  Status Delete(const std::string& key) override;
  Result<std::string> ScratchDirectory() const override { return store_->ScratchDirectory(); }
  std::string LocalPath(const std::string& key) const override { return store_->LocalPath(key); }

  // How often the store was opened anew (for tests and logs).
  int reopened() const { return reopened_; }

 private:
  // Opens the store anew when the credentials changed, or when `always`.
  Status Refresh(bool always) const;
  // `operation` on the current store, refreshed first; after a refusal as
  // unauthorized, refreshed again and, when `retry`, tried once more.
  template <typename Operation>
  auto Call(const Operation& operation, bool retry) const
      -> decltype(operation(std::declval<ObjectStore&>()));

  mutable std::unique_ptr<ObjectStore> store_;
  mutable std::string fingerprint_;
  mutable int reopened_ = 0;
  Opener open_;
  Fingerprint read_fingerprint_;
};

}  // namespace ruleplane
