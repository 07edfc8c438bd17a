#include "member/backup_metrics.h"

#include <charconv>

namespace ruleplane {
namespace {

// Prometheus' DefBuckets, which etcd-backup-restore's histograms use.
constexpr std::array<double, 11> kUpperBounds = {.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10};

std::string Number(double value) {
  char text[32];
  const auto written = std::to_chars(text, text + sizeof text, value);
  return std::string(text, written.ptr);
}

// A label value as the text format escapes it.
std::string Escaped(const std::string& value) {
  std::string escaped;
  for (const char c : value) {
    if (c == '\\') {
      escaped += "\\\\";
    } else if (c == '"') {
      escaped += "\\\"";
    } else if (c == '\n') {
      escaped += "\\n";
    } else {
      escaped += c;
    }
  }
  return escaped;
}

void Header(std::string& out, const std::string& name, const char* type, const char* help) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

}  // namespace

void BackupMetrics::ObserveStore(const std::vector<StoredSnapshot>& snapshots) {
  std::lock_guard<std::mutex> lock(mutex_);
  const StoredSnapshot* newest_full = nullptr;
  const StoredSnapshot* newest_incr = nullptr;
  std::vector<const StoredSnapshot*> deltas;  // after the newest full, newest first
  // Listed by last revision, oldest first.
  for (auto it = snapshots.rbegin(); it != snapshots.rend(); ++it) {
    if (it->kind == "Full") {
      if (newest_full == nullptr) newest_full = &*it;
      continue;
    }
    if (newest_incr == nullptr) newest_incr = &*it;
    if (newest_full == nullptr) deltas.push_back(&*it);
  }
  if (newest_full != nullptr) {
    full_.latest_revision = static_cast<double>(newest_full->last_revision);
    full_.latest_timestamp = static_cast<double>(newest_full->created_on);
  }
  if (newest_incr != nullptr) {
    incr_.latest_revision = static_cast<double>(newest_incr->last_revision);
    incr_.latest_timestamp = static_cast<double>(newest_incr->created_on);
  }
  latest_deltas_ = static_cast<double>(deltas.size());
  latest_deltas_revisions_ =
      deltas.empty() ? 0 : static_cast<double>(deltas.front()->last_revision - deltas.back()->start_revision);
}

void BackupMetrics::SnapshotTaken(const StoredSnapshot& snapshot, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  Kind& kind = Of(snapshot.kind);
  kind.latest_revision = static_cast<double>(snapshot.last_revision);
  kind.latest_timestamp = static_cast<double>(snapshot.created_on);
  Histogram& histogram = kind.succeeded;
  for (size_t i = 0; i < kBuckets; ++i)
    if (seconds <= kUpperBounds[i]) ++histogram.buckets[i];
  histogram.sum += seconds;
  ++histogram.count;
  incr_.required = 0;
  if (snapshot.kind == "Full") {
    full_.required = 0;
    latest_deltas_ = 0;
    latest_deltas_revisions_ = 0;
  } else {
    latest_deltas_ += 1;
    latest_deltas_revisions_ += static_cast<double>(snapshot.last_revision - snapshot.start_revision);
  }
}

void BackupMetrics::SnapshotFailed(const std::string& kind_name, double seconds, const std::string& error) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Kind& kind = Of(kind_name);
    Histogram& histogram = kind.failed;
    for (size_t i = 0; i < kBuckets; ++i)
      if (seconds <= kUpperBounds[i]) ++histogram.buckets[i];
    histogram.sum += seconds;
    ++histogram.count;
    // As etcd-backup-restore: a failed full leaves both kinds required.
    incr_.required = 1;
    if (kind_name == "Full") full_.required = 1;
  }
  Failure(error);
}

void BackupMetrics::Collected(const std::string& kind, bool succeeded) {
  std::lock_guard<std::mutex> lock(mutex_);
  (succeeded ? Of(kind).collected_succeeded : Of(kind).collected_failed) += 1;
}

void BackupMetrics::Failure(const std::string& error) {
  std::lock_guard<std::mutex> lock(mutex_);
  // The "" series is etcd-backup-restore's initial one: not a message.
  if (failures_.count(error) == 0 && failures_.size() > kMaxErrorSeries) {
    failures_["other"] += 1;
    return;
  }
  failures_[error] += 1;
}

void BackupMetrics::RoundRun() {
  std::lock_guard<std::mutex> lock(mutex_);
  rounds_ += 1;
}

std::string BackupMetrics::Text() const {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::array<std::pair<const char*, const Kind*>, 2> kinds = {{{"Full", &full_}, {"Incr", &incr_}}};
  std::string out;
  auto gauge = [&](const char* name, const char* help, double Kind::*field) {
    Header(out, name, "gauge", help);
    for (const auto& [label, kind] : kinds)
      out += std::string(name) + "{kind=\"" + label + "\"} " + Number(kind->*field) + "\n";
  };
  Header(out, "etcdbr_snapshot_gc_total", "counter", "Total number of garbage collected snapshots.");
  for (const auto& [label, kind] : kinds) {
    for (const bool succeeded : {false, true}) {
      out += std::string("etcdbr_snapshot_gc_total{kind=\"") + label + "\",succeeded=\"" +
             (succeeded ? "true" : "false") + "\"} " +
             Number(succeeded ? kind->collected_succeeded : kind->collected_failed) + "\n";
    }
  }
  gauge("etcdbr_snapshot_latest_revision", "Revision number of latest snapshot taken.",
        &Kind::latest_revision);
  gauge("etcdbr_snapshot_latest_timestamp", "Timestamp of latest snapshot taken.", &Kind::latest_timestamp);
  gauge("etcdbr_snapshot_required", "Indicates whether a snapshot is required to be taken.", &Kind::required);
  const std::string duration = "etcdbr_snapshot_duration_seconds";
  Header(out, duration, "histogram", "Total latency distribution of saving snapshot to object store.");
  for (const auto& [label, kind] : kinds) {
    for (const bool succeeded : {false, true}) {
      const Histogram& histogram = succeeded ? kind->succeeded : kind->failed;
      const std::string labels =
          std::string("kind=\"") + label + "\",succeeded=\"" + (succeeded ? "true" : "false") + "\"";
      for (size_t i = 0; i < kBuckets; ++i) {
        out += duration + "_bucket{" + labels + ",le=\"" + Number(kUpperBounds[i]) + "\"} " +
               std::to_string(histogram.buckets[i]) + "\n";
      }
      out += duration + "_bucket{" + labels + ",le=\"+Inf\"} " + std::to_string(histogram.count) + "\n";
      out += duration + "_sum{" + labels + "} " + Number(histogram.sum) + "\n";
      out += duration + "_count{" + labels + "} " + std::to_string(histogram.count) + "\n";
    }
  }
  Header(out, "etcdbr_snapstore_latest_deltas_total", "gauge",
         "Total number of delta snapshots taken since the latest full snapshot.");
  out += "etcdbr_snapstore_latest_deltas_total " + Number(latest_deltas_) + "\n";
  Header(out, "etcdbr_snapstore_latest_deltas_revisions_total", "gauge",
         "Total number of revisions stored in delta snapshots taken since the latest full snapshot.");
  out += "etcdbr_snapstore_latest_deltas_revisions_total " + Number(latest_deltas_revisions_) + "\n";
  Header(out, "etcdbr_snapshotter_failure", "counter", "Total number of snapshotter errors.");
  for (const auto& [error, count] : failures_)
    out += "etcdbr_snapshotter_failure{error=\"" + Escaped(error) + "\"} " + Number(count) + "\n";
  Header(out, "ruleplane_backup_rounds_total", "counter",
         "Total number of scheduled backup rounds run while leading.");
  out += "ruleplane_backup_rounds_total " + Number(rounds_) + "\n";
  return out;
}

}  // namespace ruleplane
