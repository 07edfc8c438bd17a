// `ruleplane controller` on many Etcd objects against a real kube-apiserver
// (bench/README.md, "Controller at scale"):
//
//   cold start    from the controller's process start until every Etcd has
//                 been reconciled once (each has a last-successful-reconcile
//                 gauge on /metrics)
//   steady state  over --steady-periods resync periods: API requests (the
//                 controller's own list/watch counters, and the API server's
//                 apiserver_request_total for the kinds the controller
//                 caches, by verb) and CPU (utime + stime of the process) per
//                 reconcile
//   memory        VmRSS and VmHWM after the cold start and at the end
//
//   controller_scale_bench [--etcds N] [--resync-period S] [--steady-periods K]
//                          [--threads T] [--example FILE] [--ruleplane PATH]
//
// It starts kube-apiserver 1.20.2 with its own etcd (tests/support's
// KubeCluster), installs the Etcd CRD and creates N copies of an example
// snapshot (default pink-of-health.json: a healthy 3-member cluster, so that
// the plan is empty) in the namespace "default", each renamed bench-NNNN, with
// its StatefulSet, member leases and budget but without member Pods, from T
// client threads. The leases' leaseDurationSeconds is raised to a day: no
// member sidecar renews them here, and with the example's 40 s they would
// expire during the run and turn the steady state into status updates. Every
// process it starts is stopped by its PID; its directory under $TMPDIR (or
// /tmp) is removed at the end (kept with RULEPLANE_KEEP_TEST_DIRS=1).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "adapters/kubernetes/kube_client.h"
#include "engine/common/json_value.h"
#include "platform/http_client.h"
#include "platform/process.h"
#include "tests/support/kube_cluster.h"
#include "tests/support/kube_objects.h"
#include "tests/support/source_paths.h"
#include "tests/support/temp_dir.h"

namespace ruleplane {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int64_t etcds = 500;
  int64_t resync_seconds = 30;
  int64_t steady_periods = 3;
  int64_t threads = 4;
  std::string example = "pink-of-health.json";
  std::string ruleplane = testing::RuleplaneBinary();
};

constexpr const char* kUsage =
    "usage: controller_scale_bench [--etcds N] [--resync-period S] [--steady-periods K] [--threads T]\n"
    "                              [--example FILE] [--ruleplane PATH]\n";

bool ParseOptions(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) return false;
    const std::string value = argv[i + 1];
    int64_t* count = flag == "--etcds"            ? &options.etcds
                     : flag == "--resync-period"  ? &options.resync_seconds
                     : flag == "--steady-periods" ? &options.steady_periods
                     : flag == "--threads"        ? &options.threads
                                                  : nullptr;
    if (count != nullptr) {
      *count = std::atoll(value.c_str());
      if (*count <= 0) return false;
    } else if (flag == "--example") {
      options.example = value;
    } else if (flag == "--ruleplane") {
      options.ruleplane = value;
    } else {
      return false;
    }
  }
  return true;
}

// One sample of Prometheus' text format: name{labels} value.
struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

std::vector<Sample> ParseMetrics(const std::string& text) {
  std::vector<Sample> samples;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    Sample sample;
    size_t at = line.find_first_of("{ ");
    if (at == std::string::npos) continue;
    sample.name = line.substr(0, at);
    if (line[at] == '{') {
      ++at;
      while (at < line.size() && line[at] != '}') {
        const size_t equals = line.find("=\"", at);
        if (equals == std::string::npos) break;
        std::string value;
        size_t end = equals + 2;
        for (; end < line.size() && line[end] != '"'; ++end) {
          if (line[end] == '\\' && end + 1 < line.size()) ++end;
          value += line[end];
        }
        sample.labels[line.substr(at, equals - at)] = value;
        at = end + 1;
        if (at < line.size() && line[at] == ',') ++at;
      }
      ++at;
    }
    sample.value = std::strtod(line.c_str() + at, nullptr);
    samples.push_back(std::move(sample));
  }
  return samples;
}

double Sum(const std::vector<Sample>& samples, const std::string& name, const std::string& label = "",
           const std::string& value = "") {
  double sum = 0;
  for (const Sample& sample : samples) {
    if (sample.name != name) continue;
    if (!label.empty()) {
      auto found = sample.labels.find(label);
      if (found == sample.labels.end() || found->second != value) continue;
    }
    sum += sample.value;
  }
  return sum;
}

// What the controller's /metrics says, at one moment.
struct ControllerReading {
  bool ok = false;
  double reconciles = 0, reconciles_success = 0;
  double duration_sum = 0;
  double lists = 0, watches = 0, events = 0;
  double queue_depth = 0;
  int64_t etcds_reconciled = 0;  // Etcds with a successful reconcile
};

// A /metrics page of 500 Etcds' series, or the API server's, is larger than
// HttpClient's default bound.
const HttpLimits kMetricsLimits{.max_body_bytes = 256 * 1024 * 1024, .name = "a /metrics page"};

ControllerReading ReadController(HttpClient& http, int port) {
  ControllerReading reading;
  auto answer = http.Send("GET", "http://127.0.0.1:" + std::to_string(port) + "/metrics", "",
                          std::chrono::seconds(10), {}, kMetricsLimits);
  if (!answer.ok() || answer->status != 200) return reading;
  const std::vector<Sample> samples = ParseMetrics(answer->body);
  reading.ok = true;
  reading.reconciles = Sum(samples, "ruleplane_reconciles_total");
  reading.reconciles_success = Sum(samples, "ruleplane_reconciles_total", "result", "success");
  reading.duration_sum = Sum(samples, "ruleplane_reconcile_duration_seconds_sum");
  reading.lists = Sum(samples, "ruleplane_api_requests_total", "request", "list");
  reading.watches = Sum(samples, "ruleplane_api_requests_total", "request", "watch");
  reading.events = Sum(samples, "ruleplane_watch_events_total");
  reading.queue_depth = Sum(samples, "ruleplane_workqueue_depth");
  for (const Sample& sample : samples) {
    if (sample.name == "ruleplane_cluster_last_successful_reconcile_timestamp_seconds" && sample.value > 0)
      ++reading.etcds_reconciled;
  }
  return reading;
}

// The API server's request counts for the kinds the controller caches, by
// verb (LIST, WATCH, GET, CREATE, PATCH, UPDATE, DELETE): nobody but the
// controller touches them once the bench has created its objects.
std::map<std::string, double> ReadApiServer(HttpClient& http, const testing::KubeCluster& kube) {
  static const std::set<std::string> kCached = {"etcds", "statefulsets", "leases", "pods",
                                                "poddisruptionbudgets"};
  std::map<std::string, double> by_verb;
  auto answer = http.Send("GET", kube.server() + "/metrics", "", std::chrono::seconds(10),
                          {"Authorization: Bearer " + kube.AdminConfig().token}, kMetricsLimits);
  if (!answer.ok() || answer->status != 200) return by_verb;
  for (const Sample& sample : ParseMetrics(answer->body)) {
    if (sample.name != "apiserver_request_total") continue;
    auto resource = sample.labels.find("resource"), verb = sample.labels.find("verb");
    if (resource == sample.labels.end() || verb == sample.labels.end() ||
        kCached.count(resource->second) == 0)
      continue;
    by_verb[verb->second] += sample.value;
  }
  return by_verb;
}

// utime + stime of a process, in seconds.
double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::vector<std::string> field;
  for (std::string part; fields >> part;) field.push_back(part);
  // Field 3 (state) is field[0]: utime is field 14, stime field 15.
  if (field.size() < 13) return 0;
  return static_cast<double>(std::atoll(field[11].c_str()) + std::atoll(field[12].c_str())) /
         static_cast<double>(sysconf(_SC_CLK_TCK));
}

// VmRSS and VmHWM of a process, in MiB.
std::pair<double, double> Memory(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  double rss = 0, hwm = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) rss = std::atof(line.c_str() + 6) / 1024;
    if (line.rfind("VmHWM:", 0) == 0) hwm = std::atof(line.c_str() + 6) / 1024;
  }
  return {rss, hwm};
}

// The example's text with its name replaced, without pods, its leases
// lasting a day.
Result<std::string> ExampleCopy(const Value& example, const std::string& name) {
  Value::Map fields;
  for (const auto& [key, item] : example.map_value()) {
    if (key.string_value() == "pods") {
      fields.emplace_back(key, Value::MakeList({}));
    } else if (key.string_value() == "leases") {
      Value::List leases;
      for (const Value& lease : item.list_value()) {
        Value::Map lease_fields;
        for (const auto& [part, value] : lease.map_value()) {
          if (part.string_value() != "spec") {
            lease_fields.emplace_back(part, value);
            continue;
          }
          Value::Map spec;
          for (const auto& [field, setting] : value.map_value()) {
            spec.emplace_back(field,
                              field.string_value() == "leaseDurationSeconds" ? Value::Int(86400) : setting);
          }
          lease_fields.emplace_back(part, Value::MakeMap(std::move(spec)));
        }
        leases.push_back(Value::MakeMap(std::move(lease_fields)));
      }
      fields.emplace_back(key, Value::MakeList(std::move(leases)));
    } else {
      fields.emplace_back(key, item);
    }
  }
  const Value* original_name = ValueAt(example, {"etcd", "metadata", "name"});
  if (original_name == nullptr || !original_name->is_string())
    return Error{ErrorCode::kInvalidArgument, "the example has no etcd.metadata.name", {}};
  std::string text = FormatJson(Value::MakeMap(std::move(fields)));
  const std::string& from = original_name->string_value();
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + name.size()))
    text.replace(at, from.size(), name);
  return text;
}

std::string EtcdName(int64_t index) {
  char name[32];
  std::snprintf(name, sizeof name, "bench-%04lld", static_cast<long long>(index));
  return name;
}

// Creates the N Etcds and their objects from `threads` clients.
Status CreateEtcds(const testing::KubeCluster& kube, const Options& options, const std::string& directory) {
  auto example = testing::LoadJsonFile(testing::ExamplePath(options.example));
  if (!example.ok()) return example.error();
  std::atomic<int64_t> next{0};
  std::mutex failure_mutex;
  Status failure;
  std::vector<std::thread> threads;
  for (int64_t t = 0; t < options.threads; ++t) {
    threads.emplace_back([&] {
      KubeClient client(kube.AdminConfig());
      for (int64_t i = next++; i < options.etcds; i = next++) {
        const std::string name = EtcdName(i), path = directory + "/" + name + ".json";
        auto text = ExampleCopy(*example, name);
        Status made = text.ok() ? Status{} : Status{text.error()};
        if (made.ok()) {
          std::ofstream(path) << *text;
          RequestLog log;
          auto created = testing::CreateExampleObjects(client, path, log, "default");
          if (!created.ok()) made = Error{created.error().code, name + ": " + created.error().message, {}};
        }
        if (!made.ok()) {
          std::lock_guard lock(failure_mutex);
          failure = made;
          next = options.etcds;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  return failure;
}

double Seconds(Clock::duration elapsed) { return std::chrono::duration<double>(elapsed).count(); }

void Row(const std::string& what, const std::string& value) {
  std::printf("%-58s %s\n", what.c_str(), value.c_str());
}

std::string Format(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

std::string Verbs(const std::map<std::string, double>& after, const std::map<std::string, double>& before) {
  std::string text;
  for (const auto& [verb, count] : after) {
    auto earlier = before.find(verb);
    const double delta = count - (earlier != before.end() ? earlier->second : 0);
    if (delta == 0) continue;
    text += (text.empty() ? "" : ", ") + verb + " " + Format("%.0f", delta);
  }
  return text.empty() ? "none" : text;
}

double Writes(const std::map<std::string, double>& after, const std::map<std::string, double>& before) {
  double writes = 0;
  for (const auto& [verb, count] : after) {
    if (verb == "GET" || verb == "LIST" || verb == "WATCH") continue;
    auto earlier = before.find(verb);
    writes += count - (earlier != before.end() ? earlier->second : 0);
  }
  return writes;
}

Status Run(const Options& options, const std::string& directory) {
  const auto bench_started = Clock::now();
  auto kube = testing::KubeCluster::Start(directory + "/kube", std::vector<std::string>{});
  if (!kube.ok()) return kube.error();
  {
    KubeClient admin((*kube)->AdminConfig());
    RequestLog log;
    if (Status installed = testing::InstallEtcdCrd(admin, log); !installed.ok()) return installed;
  }
  std::printf("kube-apiserver ready in %.1f s\n", Seconds(Clock::now() - bench_started));
  const auto creating = Clock::now();
  if (Status created = CreateEtcds(**kube, options, directory); !created.ok()) return created;
  std::printf("created %lld Etcds with their StatefulSet, leases and budget in %.1f s (%lld threads)\n",
              static_cast<long long>(options.etcds), Seconds(Clock::now() - creating),
              static_cast<long long>(options.threads));
  std::fflush(stdout);

  HttpClient http({(*kube)->AdminConfig().tls});
  const auto api_before = ReadApiServer(http, **kube);
  const int port = FreeLoopbackPort();
  const std::string log_path = directory + "/controller.log";
  const auto started = Clock::now();
  auto controller = ChildProcess::Start(
      {options.ruleplane, "controller", "--kubeconfig", (*kube)->WriteKubeconfig("admin"), "-n", "default",
       "--leader-elect", "false", "--journal", directory + "/journal.db", "--resync-period",
       std::to_string(options.resync_seconds), "--metrics-bind-address", "127.0.0.1:" + std::to_string(port)},
      log_path);
  if (!controller.ok()) return controller.error();
  const pid_t pid = controller->pid();

  // Cold start: until every Etcd has had a successful reconcile.
  HttpClient scraper;
  double ready_seconds = -1;
  ControllerReading cold;
  const auto deadline = started + std::chrono::seconds(600);
  while (true) {
    if (!controller->running())
      return Error{ErrorCode::kUnavailable, "the controller exited; see " + log_path, {}};
    if (Clock::now() > deadline)
      return Error{
          ErrorCode::kDeadlineExceeded, "not every Etcd was reconciled in 600 s; see " + log_path, {}};
    if (ready_seconds < 0) {
      auto ready = scraper.Send("GET", "http://127.0.0.1:" + std::to_string(port) + "/readyz", "",
                                std::chrono::seconds(5));
      if (ready.ok() && ready->status == 200) ready_seconds = Seconds(Clock::now() - started);
    }
    cold = ReadController(scraper, port);
    if (cold.ok && cold.etcds_reconciled >= options.etcds) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const double cold_seconds = Seconds(Clock::now() - started);
  const double cold_cpu = CpuSeconds(pid);
  const auto cold_memory = Memory(pid);
  const auto api_cold = ReadApiServer(http, **kube);

  // Steady state: whole resync periods from the end of the cold start's queue.
  while (ReadController(scraper, port).queue_depth > 0 && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const ControllerReading steady_start = ReadController(scraper, port);
  const double cpu_start = CpuSeconds(pid);
  const auto api_start = ReadApiServer(http, **kube);
  const auto window_start = Clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(options.resync_seconds * options.steady_periods));
  const ControllerReading steady_end = ReadController(scraper, port);
  const double cpu_end = CpuSeconds(pid);
  const auto api_end = ReadApiServer(http, **kube);
  const double window = Seconds(Clock::now() - window_start);
  const auto end_memory = Memory(pid);
  const int stopped = controller->Stop(std::chrono::seconds(10));

  const double reconciles = steady_end.reconciles - steady_start.reconciles;
  const double own_requests =
      (steady_end.lists - steady_start.lists) + (steady_end.watches - steady_start.watches);
  double server_requests = 0;
  for (const auto& [verb, count] : api_end)
    server_requests += count - (api_start.count(verb) ? api_start.at(verb) : 0);
  std::printf("\n%lld Etcds, --resync-period %lld, controller pid %d\n",
              static_cast<long long>(options.etcds), static_cast<long long>(options.resync_seconds),
              static_cast<int>(pid));
  Row("cold start: /readyz answers 200 (every kind listed)", Format("%.2f s", ready_seconds));
  Row("cold start: every Etcd reconciled once", Format("%.2f s", cold_seconds));
  Row("  reconciles by then (success / all)",
      Format("%.0f", cold.reconciles_success) + " / " + Format("%.0f", cold.reconciles));
  Row("  CPU of the controller by then", Format("%.2f s", cold_cpu));
  Row("  API server requests by then (cached kinds, by verb)", Verbs(api_cold, api_before));
  Row("  memory after the cold start: VmRSS / VmHWM",
      Format("%.1f MiB", cold_memory.first) + " / " + Format("%.1f MiB", cold_memory.second));
  Row("steady state: window", Format("%.1f s", window));
  Row("  reconciles (all successful)",
      Format("%.0f", reconciles) + " (" +
          Format("%.0f", steady_end.reconciles_success - steady_start.reconciles_success) + ")");
  Row("  writes to the API server", Format("%.0f", Writes(api_end, api_start)));
  Row("  API server requests (cached kinds, by verb)", Verbs(api_end, api_start));
  Row("  controller's own lists + watches", Format("%.0f", own_requests));
  Row("  watch events received", Format("%.0f", steady_end.events - steady_start.events));
  Row("  API requests per reconcile (API server's count)",
      Format("%.4f", reconciles > 0 ? server_requests / reconciles : 0));
  Row("  CPU per reconcile (utime + stime / reconciles)",
      Format("%.0f µs", reconciles > 0 ? (cpu_end - cpu_start) / reconciles * 1e6 : 0));
  Row("  reconcile duration, mean (the metric's sum / count)",
      Format("%.0f µs",
             reconciles > 0 ? (steady_end.duration_sum - steady_start.duration_sum) / reconciles * 1e6 : 0));
  Row("  CPU of the controller over the window", Format("%.2f s", cpu_end - cpu_start));
  Row("memory at the end: VmRSS / VmHWM",
      Format("%.1f MiB", end_memory.first) + " / " + Format("%.1f MiB", end_memory.second));
  Row("controller's exit status after SIGTERM", Format("%.0f", stopped));
  return {};
}

}  // namespace
}  // namespace ruleplane

int main(int argc, char** argv) {
  ruleplane::Options options;
  if (!ruleplane::ParseOptions(argc, argv, options)) {
    std::cerr << ruleplane::kUsage;
    return 2;
  }
  ruleplane::testing::TempDir directory("controller-scale-bench");
  if (directory.path().empty()) {
    std::cerr << "controller_scale_bench: cannot create a temporary directory\n";
    return 1;
  }
  if (ruleplane::Status done = ruleplane::Run(options, directory.path()); !done.ok()) {
    std::cerr << "controller_scale_bench: " << done.error().message << "\n";
    return 1;
  }
  return 0;
}
