// KubeClient: the Kubernetes REST API over libcurl, for any kind (custom
// resources included) as JSON Values, in the manner of kubernetes-client/c's
// generic client: get, list (label selectors, every page), create, JSON merge
// patch (a resourceVersion in the patch is the precondition), the status and
// scale subresources, delete (preconditions, gracePeriodSeconds), and
// server-side dry run (dryRun=All on every write).
//
//   KubeClient client(*LoadKubeconfig(path, ""));
//   auto etcd = client.Get({"druid.gardener.cloud/v1alpha1", "etcds", "shoot", "etcd-main"}, log);
//   client.MergePatch({"apps/v1", "statefulsets", "shoot", "etcd-main", "scale"},
//                     Value(...{"spec": {"replicas": 3}}...), log);
//
// Every request is built as a Request and recorded in `log` first; writes
// are not sent when the log is a dry run (reads are). Failures are decoded
// from the API's Status (reason, message, causes) and carry the code that
// says what to do: 409 kConflict (re-observe, never retry blindly), 429
// (after honouring Retry-After a few times) and 5xx kUnavailable, timeouts
// kDeadlineExceeded, 401/403 kPermissionDenied naming the verb, resource and
// namespace and the Role rule that would allow it, 404 kNotFound, 422 and
// other 4xx kInvalidArgument with the field causes.
//
// Bounds on the API server's answers (docs/bounds.md, "Network answers"), checked
// while they arrive, each failing the call with kUnavailable naming it:
// one object (get, create, patch, delete, any error) 16 MiB
// (kKubeObjectAnswerBytes; etcd stores an object of 1.5 MiB at most), one
// page of a list 256 MiB (kKubeListPageBytes; `limit` items a page, 500 by
// default), one event of a watch 16 MiB (kKubeWatchEventBytes); headers 64
// KiB; a whole list (every page) 100,000 items and 1,000 pages
// (kKubeListItems, kKubeListPages: a server that hands out continue tokens
// without end is stopped), and a continue token is never asked for twice.
// Time: the client's timeout (15 s by default) a request; a watch, the
// timeout it asks the server for plus 10 s. The token file: a regular file
// of 1 MiB at most (kMaxTokenFileBytes, platform/file_input.h).
#pragma once

#include <array>
#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "adapters/kubernetes/kube_config.h"
#include "adapters/request.h"
#include "engine/common/error.h"
#include "engine/common/value.h"
#include "platform/http_client.h"

namespace ruleplane {

inline constexpr size_t kKubeObjectAnswerBytes = 16 * 1024 * 1024;
inline constexpr size_t kKubeListPageBytes = 256 * 1024 * 1024;
inline constexpr size_t kKubeWatchEventBytes = 16 * 1024 * 1024;
inline constexpr size_t kKubeListItems = 100'000;
inline constexpr int kKubeListPages = 1'000;

// Which objects a request is about.
struct KubeResource {
  std::string api_version;     // "v1", "apps/v1", "druid.gardener.cloud/v1alpha1"
  std::string plural;          // "pods", "statefulsets", "etcds"
  std::string namespace_name;  // "" for cluster-scoped resources
  std::string name;            // "" for the collection
  std::string subresource;     // "status", "scale", "binding", or ""

  std::string Path() const;  // "/apis/apps/v1/namespaces/ns/statefulsets/name/scale"
};

// A merge patch that sets `field` to `content`, fenced by the resourceVersion
// the change was decided on: the server answers 409 Conflict when the object
// changed since (the caller re-observes). `field` "metadata" takes the
// resourceVersion into `content` (a map).
Value FencedMergePatch(const std::string& resource_version, std::string_view field, Value content);

// A time as the API server's MicroTime wants it (a Lease's renewTime):
// RFC 3339 in UTC with exactly six fractional digits.
std::string FormatMicroTime(std::chrono::system_clock::time_point time);

// metadata.resourceVersion of an object as read, or "".
std::string ResourceVersionOf(const Value& object);

class KubeClient {
 public:
  explicit KubeClient(KubeConfig config, std::chrono::milliseconds timeout = std::chrono::seconds(15));

  const KubeConfig& config() const { return config_; }
  // Every write carries dryRun=All: the API server validates it and stores nothing.
  void set_server_dry_run(bool on) { server_dry_run_ = on; }
  // A watch (or any call) in progress ends soon after `*cancel` turns true.
  void set_cancel(const std::atomic<bool>* cancel) { http_.set_cancel(cancel); }
  // Asked right before each request goes out (each attempt): an error means
  // it is not sent, and the call fails with that error. A controller's
  // workers send nothing once their leadership is gone.
  void set_guard(std::function<Status()> guard) { guard_ = std::move(guard); }
  // What the other clients of the same worker (the members', the sidecars')
  // take over, so that they too send nothing once the leadership is gone.
  const std::function<Status()>& guard() const { return guard_; }
  const std::atomic<bool>* cancel() const { return http_.cancel(); }
  // Items per page of a List (the API server's `limit`; 500 by default).
  void set_page_size(int64_t items) { page_size_ = items; }

  Result<Value> Get(const KubeResource& object, RequestLog& log);
  // Whether the API server serves `plural` in `api_version` ("policy/v1"),
  // from its discovery document (/apis/<group>/<version>), which every
  // authenticated user may read: a Kubernetes that dropped or not yet added
  // a version answers 404 there.
  Result<bool> Serves(const std::string& api_version, const std::string& plural, RequestLog& log);
  // Every item of the collection (following `continue`), as one list object;
  // selectors "" select everything.
  Result<Value> List(const KubeResource& collection, const std::string& label_selector, RequestLog& log,
                     const std::string& field_selector = "");
  // The created object (or, not sent in a dry run, null).
  Result<Value> Create(const KubeResource& collection, const Value& object, RequestLog& log);
  Result<Value> MergePatch(const KubeResource& object, const Value& patch, RequestLog& log);
  // Preconditions ("" = none): the object is deleted only while it still has
  // this resourceVersion / uid. A deleted object (404) is not an error.
  // `propagation_policy` ("" = the resource's default; batch/v1 Jobs orphan
  // their Pods by default): Foreground, Background or Orphan.
  struct DeletePreconditions {
    std::string resource_version;
    std::string uid;
  };
  Status Delete(const KubeResource& object, const DeletePreconditions& preconditions,
                std::optional<int64_t> grace_period_seconds, RequestLog& log,
                std::string_view propagation_policy = "");

  // A watch of the collection from `resource_version` (with bookmarks):
  // each event ("ADDED", "MODIFIED", "DELETED", "BOOKMARK") and its object
  // to `on_event` until it returns false or the server ends the watch (after
  // `timeout`). `expired` when the version is too old (410 Gone): list again.
  struct WatchEnd {
    std::string resource_version;  // the last one seen, to watch on from
    bool expired = false;
  };
  using WatchHandler = std::function<bool(const std::string& type, const Value& object)>;
  Result<WatchEnd> Watch(const KubeResource& collection, const std::string& label_selector,
                         const std::string& resource_version, std::chrono::seconds timeout,
                         const WatchHandler& on_event);

 private:
  Result<Value> Call(const std::string& method, const KubeResource& resource, const std::string& query,
                     const std::string& body, bool mutates, RequestLog& log,
                     size_t max_answer_bytes = kKubeObjectAnswerBytes);
  Result<std::string> BearerToken();

  KubeConfig config_;
  std::chrono::milliseconds timeout_;
  HttpClient http_;
  std::function<Status()> guard_;
  bool server_dry_run_ = false;
  int64_t page_size_ = 500;
  std::string cached_token_;
  std::array<int64_t, 5> token_version_{};  // device, inode, mtime (s, ns), size of the token file read
};

// The error a failed API call means, from its HTTP status and Status body.
// `verb` is the RBAC verb (get, list, create, patch, delete).
Error KubeStatusError(long status, const std::string& verb, const KubeResource& resource,
                      const std::string& body);

}  // namespace ruleplane
