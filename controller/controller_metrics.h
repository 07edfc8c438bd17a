// ControllerMetrics: what `ruleplane controller` serves on /metrics, in
// Prometheus' text exposition format (version 0.0.4). Thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace ruleplane {

class ControllerMetrics {
 public:
  // result: "success", "error", "conflict" or "refused".
  void Reconciled(const std::string& result, double seconds);
  // result: the step's state ("succeeded", "skipped", "failed", ...).
  void Step(const std::string& action, const std::string& result, bool disruptive);
  struct ClusterState {
    int64_t desired = 0;  // spec.replicas
    int64_t ready = 0;    // status.members that are Ready
    bool quorate = false;
    double last_success = 0;  // unix seconds of the last successful reconcile, 0 = none
  };
  void Cluster(const std::string& key, const ClusterState& state);
  void SetQueueDepth(int64_t depth);
  void SetLeader(bool leader);
  void SetApiRequests(int64_t lists, int64_t watches, int64_t events);

  std::string Text() const;

 private:
  static constexpr std::array<double, 10> kBuckets = {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60};
  mutable std::mutex mutex_;
  std::map<std::string, int64_t> reconciles_;                // result
  std::array<int64_t, kBuckets.size()> duration_buckets_{};  // cumulative counts per upper bound
  int64_t duration_count_ = 0;
  double duration_sum_ = 0;
  std::map<std::pair<std::string, std::string>, int64_t> steps_;  // (action, result)
  int64_t disruptive_steps_ = 0;
  std::map<std::string, ClusterState> clusters_;
  int64_t queue_depth_ = 0;
  bool leader_ = false;
  int64_t lists_ = 0, watches_ = 0, events_ = 0;
};

}  // namespace ruleplane
