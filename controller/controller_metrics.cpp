#include "controller/controller_metrics.h"

#include <sstream>

namespace ruleplane {
namespace {

// A label value with \, " and newlines escaped.
std::string Label(const std::string& value) {
  std::string escaped;
  for (char c : value) {
    if (c == '\\' || c == '"') escaped += '\\';
    escaped += c == '\n' ? 'n' : c;
  }
  return escaped;
}

void Header(std::ostringstream& out, const char* name, const char* type, const char* help) {
  out << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
}

}  // namespace

void ControllerMetrics::Reconciled(const std::string& result, double seconds) {
  std::lock_guard lock(mutex_);
  ++reconciles_[result];
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) ++duration_buckets_[i];
  }
  ++duration_count_;
  duration_sum_ += seconds;
}

void ControllerMetrics::Step(const std::string& action, const std::string& result, bool disruptive) {
  std::lock_guard lock(mutex_);
  ++steps_[{action, result}];
  if (disruptive && result == "succeeded") ++disruptive_steps_;
}

void ControllerMetrics::Cluster(const std::string& key, const ClusterState& state) {
  std::lock_guard lock(mutex_);
  ClusterState& kept = clusters_[key];
  const double last_success = kept.last_success;
  kept = state;
  if (kept.last_success == 0) kept.last_success = last_success;
}

void ControllerMetrics::SetQueueDepth(int64_t depth) {
  std::lock_guard lock(mutex_);
  queue_depth_ = depth;
}

void ControllerMetrics::SetLeader(bool leader) {
  std::lock_guard lock(mutex_);
  leader_ = leader;
}

void ControllerMetrics::SetApiRequests(int64_t lists, int64_t watches, int64_t events) {
  std::lock_guard lock(mutex_);
  lists_ = lists;
  watches_ = watches;
  events_ = events;
}

std::string ControllerMetrics::Text() const {
  std::lock_guard lock(mutex_);
  std::ostringstream out;
  Header(out, "ruleplane_reconciles_total", "counter", "Reconciles of Etcd objects, by result.");
  for (const auto& [result, count] : reconciles_)
    out << "ruleplane_reconciles_total{result=\"" << Label(result) << "\"} " << count << "\n";
  Header(out, "ruleplane_reconcile_duration_seconds", "histogram", "Time from observing to the last step.");
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    out << "ruleplane_reconcile_duration_seconds_bucket{le=\"" << kBuckets[i] << "\"} "
        << duration_buckets_[i] << "\n";
  }
  out << "ruleplane_reconcile_duration_seconds_bucket{le=\"+Inf\"} " << duration_count_ << "\n";
  out << "ruleplane_reconcile_duration_seconds_sum " << duration_sum_ << "\n";
  out << "ruleplane_reconcile_duration_seconds_count " << duration_count_ << "\n";
  Header(out, "ruleplane_steps_total", "counter", "Plan steps, by action and result.");
  for (const auto& [key, count] : steps_) {
    out << "ruleplane_steps_total{action=\"" << Label(key.first) << "\",result=\"" << Label(key.second)
        << "\"} " << count << "\n";
  }
  Header(out, "ruleplane_disruptive_steps_total", "counter", "Disruptive steps performed.");
  out << "ruleplane_disruptive_steps_total " << disruptive_steps_ << "\n";
  Header(out, "ruleplane_workqueue_depth", "gauge", "Etcd objects waiting to be reconciled.");
  out << "ruleplane_workqueue_depth " << queue_depth_ << "\n";
  Header(out, "ruleplane_leader", "gauge", "1 while this replica holds the leader Lease.");
  out << "ruleplane_leader " << (leader_ ? 1 : 0) << "\n";
  Header(out, "ruleplane_api_requests_total", "counter", "Requests of the watch cache, by kind.");
  out << "ruleplane_api_requests_total{request=\"list\"} " << lists_ << "\n";
  out << "ruleplane_api_requests_total{request=\"watch\"} " << watches_ << "\n";
  Header(out, "ruleplane_watch_events_total", "counter", "Watch events received, bookmarks included.");
  out << "ruleplane_watch_events_total " << events_ << "\n";
  Header(out, "ruleplane_cluster_desired_members", "gauge", "The Etcd's spec.replicas.");
  for (const auto& [key, state] : clusters_)
    out << "ruleplane_cluster_desired_members{etcd=\"" << Label(key) << "\"} " << state.desired << "\n";
  Header(out, "ruleplane_cluster_ready_members", "gauge", "Members Ready in the Etcd's status.");
  for (const auto& [key, state] : clusters_)
    out << "ruleplane_cluster_ready_members{etcd=\"" << Label(key) << "\"} " << state.ready << "\n";
  Header(out, "ruleplane_cluster_has_quorum", "gauge", "1 while 2 * ready > the cluster size.");
  for (const auto& [key, state] : clusters_)
    out << "ruleplane_cluster_has_quorum{etcd=\"" << Label(key) << "\"} " << (state.quorate ? 1 : 0) << "\n";
  Header(out, "ruleplane_cluster_last_successful_reconcile_timestamp_seconds", "gauge",
         "Unix time of the last successful reconcile.");
  for (const auto& [key, state] : clusters_) {
    out << "ruleplane_cluster_last_successful_reconcile_timestamp_seconds{etcd=\"" << Label(key) << "\"} "
        << static_cast<int64_t>(state.last_success) << "\n";
  }
  return out.str();
}

}  // namespace ruleplane
