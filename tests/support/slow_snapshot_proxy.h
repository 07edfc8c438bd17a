// A slow link to one etcd member, for tests: an HTTP proxy on loopback that
// passes every call of etcd's JSON gateway through to the member as it is,
// except the snapshot stream, which it passes on in small slices spread over
// `drip` (what a large database over a slow network looks like to the
// client). Every answer closes its connection; connections are served in
// parallel.
//
//   auto proxy = SlowSnapshotProxy::Start(etcd->member(0).client_url, std::chrono::seconds(12));
//   ruleplane member-agent --endpoints <proxy->url()> ...   // its snapshot takes 12 s
//   proxy->snapshots_completed();
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/common/error.h"
#include "tests/support/loopback_listener.h"

namespace ruleplane::testing {

class SlowSnapshotProxy {
 public:
  static Result<std::unique_ptr<SlowSnapshotProxy>> Start(std::string member_url,
                                                          std::chrono::milliseconds drip);
  ~SlowSnapshotProxy();  // stops, ends a drip in progress

  std::string url() const { return "http://127.0.0.1:" + std::to_string(listener_->port()); }
  // A snapshot is being passed on now.
  bool snapshot_in_progress() const { return in_progress_ > 0; }
  // Snapshots passed on to their end, and ones whose client went away first.
  int snapshots_completed() const { return completed_; }
  int snapshots_abandoned() const { return abandoned_; }

 private:
  SlowSnapshotProxy() = default;
  void Serve(int connection);

  std::string member_url_;
  std::chrono::milliseconds drip_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<int> in_progress_{0}, completed_{0}, abandoned_{0};
  std::unique_ptr<LoopbackListener> listener_;  // last: its connections use the members above
};

}  // namespace ruleplane::testing
