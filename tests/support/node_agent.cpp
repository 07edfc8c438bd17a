#include "tests/support/node_agent.h"

#include <signal.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "adapters/kubernetes/kube_client.h"
#include "engine/common/json_value.h"
#include "platform/base64.h"
#include "platform/http_client.h"
#include "platform/process.h"

namespace ruleplane::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

constexpr auto kPollInterval = std::chrono::milliseconds(200);
constexpr auto kHeartbeatInterval = std::chrono::seconds(10);
constexpr auto kMaxBackoff = std::chrono::seconds(10);
constexpr int64_t kMaxGraceSeconds = 5;
constexpr int kFirstStatefulSetHost = 10;
constexpr int kFirstOtherHost = 200;

// Field readers that never throw (nlohmann's would on a type mismatch).
const Json& Field(const Json& object, const char* key) {
  static const Json null;
  if (!object.is_object()) return null;
  const auto found = object.find(key);
  return found == object.end() ? null : *found;
}

const Json& Array(const Json& object, const char* key) {
  static const Json empty = Json::array();
  const Json& value = Field(object, key);
  return value.is_array() ? value : empty;
}

std::string Str(const Json& object, const char* key) {
  const Json& value = Field(object, key);
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer()) return std::to_string(value.get<int64_t>());
  return "";
}

int64_t Int(const Json& object, const char* key, int64_t otherwise) {
  const Json& value = Field(object, key);
  return value.is_number_integer() ? value.get<int64_t>() : otherwise;
}

std::string Rfc3339Now() {
  const time_t now = time(nullptr);
  tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

// The ordinal of a StatefulSet Pod's name "<sts>-<i>", or -1.
int Ordinal(const std::string& name) {
  const size_t dash = name.rfind('-');
  if (dash == std::string::npos || dash + 1 == name.size() || name.size() - dash > 4) return -1;
  for (size_t i = dash + 1; i < name.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return -1;
  return std::stoi(name.substr(dash + 1));
}

bool IsOwnedByStatefulSet(const Json& pod) {
  for (const Json& owner : Array(Field(pod, "metadata"), "ownerReferences"))
    if (Str(owner, "kind") == "StatefulSet") return true;
  return false;
}

// $(VAR) expansion as Kubernetes does it: "$$" is "$", a defined variable is
// replaced, an undefined one is left as it is.
std::string Expand(const std::string& input, const std::map<std::string, std::string>& variables) {
  std::string out;
  for (size_t i = 0; i < input.size();) {
    if (input[i] != '$' || i + 1 == input.size()) {
      out += input[i++];
    } else if (input[i + 1] == '$') {
      out += '$';
      i += 2;
    } else if (input[i + 1] == '(') {
      const size_t close = input.find(')', i + 2);
      if (close == std::string::npos) {
        out += input.substr(i);
        break;
      }
      const std::string name = input.substr(i + 2, close - i - 2);
      const auto found = variables.find(name);
      out += found != variables.end() ? found->second : "$(" + name + ")";
      i = close + 1;
    } else {
      out += input[i++];
    }
  }
  return out;
}

bool IsHostChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.'; }
bool IsPathChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
}

// A volumeMount as a host directory: mountPath (no trailing '/') -> host path.
struct Mount {
  std::string mount_path;
  std::string host_path;
};

// Every path under a mountPath in `text` (at the start, or after '=', ':',
// ',', a quote or white space) rewritten to its host path; longest first.
std::string RewritePaths(const std::string& text, const std::vector<Mount>& mounts_longest_first) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const bool boundary_before =
        i == 0 || std::string_view("=:,'\" \t\n").find(text[i - 1]) != std::string::npos;
    bool rewritten = false;
    if (boundary_before && text[i] == '/') {
      for (const Mount& mount : mounts_longest_first) {
        const size_t end = i + mount.mount_path.size();
        if (text.compare(i, mount.mount_path.size(), mount.mount_path) != 0) continue;
        if (end < text.size() && text[end] != '/' && IsPathChar(text[end])) continue;
        out += mount.host_path;
        i = end;
        rewritten = true;
        break;
      }
    }
    if (!rewritten) out += text[i++];
  }
  return out;
}

// The host directory behind one of a Pod's volumes.
// configMap and secret volumes: one directory per Pod name, written again
// when a Pod of that name starts. A real kubelet mounts them at the same
// path in every Pod; here their host directory is what containers see, and
// member-init keeps the paths it was given in the configuration it writes
// on the Pod's persistent volume, which a later Pod of the name reads.
std::string VolumeHostDir(const Json& volume, const std::string& root, const std::string& pod_uid,
                          const std::string& pod_name) {
  if (const Json& claim = Field(volume, "persistentVolumeClaim"); claim.is_object())
    return root + "/pvc/" + Str(claim, "claimName");
  if (const Json& host_path = Field(volume, "hostPath"); host_path.is_object())
    return root + "/hostpath/" + Str(host_path, "path");
  if (Field(volume, "configMap").is_object() || Field(volume, "secret").is_object())
    return root + "/configs/" + pod_name + "/" + Str(volume, "name");
  return root + "/pods/" + pod_uid + "/" + Str(volume, "name");
}

// A container's volumeMounts as host directories (+ subPath), appended to
// `mounts`, which is then sorted longest mountPath first.
void AddMounts(const Json& container, const std::map<std::string, std::string>& volume_dirs,
               std::vector<Mount>& mounts) {
  for (const Json& mount : Array(container, "volumeMounts")) {
    std::string mount_path = Str(mount, "mountPath");
    while (mount_path.size() > 1 && mount_path.back() == '/') mount_path.pop_back();
    const auto host = volume_dirs.find(Str(mount, "name"));
    if (host == volume_dirs.end() || mount_path.size() <= 1) continue;
    const std::string sub_path = Str(mount, "subPath");
    mounts.push_back({mount_path, host->second + (sub_path.empty() ? "" : "/" + sub_path)});
  }
  std::stable_sort(mounts.begin(), mounts.end(),
                   [](const Mount& a, const Mount& b) { return a.mount_path.size() > b.mount_path.size(); });
}

// "<pod>.<service>.<namespace>.svc[.cluster.local]" -> resolve(pod, namespace), where it answers.
template <typename Resolver>
std::string ResolveNames(const std::string& text, const Resolver& resolve) {
  std::string out;
  size_t copied = 0;
  for (size_t at = text.find(".svc"); at != std::string::npos; at = text.find(".svc", at + 1)) {
    size_t end = at + 4;
    if (text.compare(end, 14, ".cluster.local") == 0) end += 14;
    if (end < text.size() && IsHostChar(text[end])) continue;
    size_t start = at;
    while (start > copied && IsHostChar(text[start - 1])) --start;
    const std::string host = text.substr(start, at - start);
    const size_t first_dot = host.find('.');
    const size_t second_dot = first_dot == std::string::npos ? first_dot : host.find('.', first_dot + 1);
    if (second_dot == std::string::npos || host.find('.', second_dot + 1) != std::string::npos) continue;
    const std::string ip = resolve(host.substr(0, first_dot), host.substr(second_dot + 1));
    if (ip.empty()) continue;
    out += text.substr(copied, start - copied) + ip;
    copied = end;
  }
  return out + text.substr(copied);
}

// The Pod's own network namespace stand-in: a process that listens on
// "0.0.0.0" (etcd-druid's listen-*-urls) would take the port on every
// loopback address, so it listens on the Pod's IP instead.
std::string BindToPodIP(const std::string& text, const std::string& pod_ip) {
  constexpr std::string_view kAny = "0.0.0.0";
  const auto part_of_address = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; };
  std::string out = text;
  for (size_t at = out.find(kAny); at != std::string::npos; at = out.find(kAny, at)) {
    const size_t end = at + kAny.size();
    if ((at > 0 && part_of_address(out[at - 1])) || (end < out.size() && part_of_address(out[end]))) {
      at = end;  // part of another address, such as 10.0.0.0
      continue;
    }
    out.replace(at, kAny.size(), pod_ip);
    at += pod_ip.size();
  }
  return out;
}

Status WriteFile(const std::string& path, const std::string& content) {
  std::error_code made;
  fs::create_directories(fs::path(path).parent_path(), made);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << content;
  file.close();
  if (!file) return Error{ErrorCode::kIo, "cannot write " + path, {}};
  return {};
}

}  // namespace

class NodeAgent::Impl {
 public:
  Impl(const KubeConfig& admin, NodeAgentOptions options)
      : options_(std::move(options)), client_(admin, std::chrono::seconds(10)), server_(admin.server) {
    client_.set_cancel(&cancel_);  // a request in flight (the API server may be gone) ends at RequestStop
  }

  Status RegisterNode();
  void Run();
  void RequestStop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    cancel_ = true;
    wake_.notify_all();
  }

  std::string PodIP(const std::string& pod) const;
  std::string VolumeDir(const std::string& pod, const std::string& volume) const;
  int Pid(const std::string& pod, const std::string& container) const;

  std::thread thread;

 private:
  struct Container {
    std::string name;
    std::string image;
    std::vector<std::string> argv;
    std::vector<std::string> environment;  // NAME=value
    Json readiness_probe;
    std::vector<std::string> probe_argv;  // an exec probe's command, expanded and rewritten
    Json ports;
    ChildProcess process;
    int last_pid = 0;
    int restart_count = 0;
    bool ever_started = false;
    bool ready = false;
    bool completed = false;  // exited and not to be restarted (init containers: with 0)
    int exit_code = 0;
    std::string started_at, finished_at;
    Clock::time_point started, next_start, next_probe;
    std::chrono::seconds backoff{1};
  };
  struct Pod {
    std::string name, uid, ip, start_time;
    Json object;
    bool prepared = false;
    std::string waiting_message;  // why it is not prepared yet
    std::map<std::string, std::string> volume_dirs;
    std::vector<Container> init_containers, containers;
    std::map<std::string, std::pair<bool, std::string>> conditions;  // type -> (status, lastTransitionTime)
    std::string written_status;
  };

  void Tick(const Json& pods);
  void Bind(const std::string& name);
  void Heartbeat();
  std::string AssignIP(const Json& pod);
  std::string Resolve(const std::string& pod, const std::string& namespace_name) const;
  Status Prepare(Pod& pod);
  Status PrepareVolume(Pod& pod, const Json& volume);
  Result<std::string> ServiceAccountKubeconfig(Pod& pod);
  Result<Container> BuildContainer(const Pod& pod, const Json& spec,
                                   const std::map<std::string, std::string>& base_environment);
  void Advance(Pod& pod);
  void StartContainer(Pod& pod, Container& container);
  bool Reap(Container& container);  // true when it has just exited
  bool Probe(const Pod& pod, Container& container);
  void WriteStatus(Pod& pod);
  Json ContainerStatus(const Pod& pod, const Container& container, bool init) const;
  void StopPod(Pod& pod, int64_t grace_seconds);
  void ForgetPod(Pod& pod, int64_t grace_seconds);

  const NodeAgentOptions options_;
  KubeClient client_;
  const std::string server_;
  HttpClient probe_http_;
  Clock::time_point last_heartbeat_;
  std::string node_ready_since_;

  std::atomic<bool> cancel_{false};
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::map<std::string, Pod> pods_;                   // by uid
  std::map<std::string, std::string> other_pod_ips_;  // Pods not of a StatefulSet, by name
};

Status NodeAgent::Impl::RegisterNode() {
  RequestLog log;
  const Json node = {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata",
       {{"name", options_.node_name}, {"labels", {{"kubernetes.io/hostname", options_.node_name}}}}}};
  auto created = client_.Create({"v1", "nodes", "", "", ""}, ValueFromJson(node), log);
  if (!created.ok() && created.error().code != ErrorCode::kConflict) return created.error();
  node_ready_since_ = Rfc3339Now();
  last_heartbeat_ = Clock::now() - kHeartbeatInterval;
  Heartbeat();
  return {};
}

// The node lifecycle controller marks a node silent for 40 s NotReady and
// then evicts its Pods: keep the Ready condition fresh.
void NodeAgent::Impl::Heartbeat() {
  if (Clock::now() - last_heartbeat_ < kHeartbeatInterval) return;
  const Json status = {{"status",
                        {{"conditions",
                          {{{"type", "Ready"},
                            {"status", "True"},
                            {"reason", "KubeletReady"},
                            {"message", "ruleplane's test node agent is posting ready status"},
                            {"lastHeartbeatTime", Rfc3339Now()},
                            {"lastTransitionTime", node_ready_since_}}}},
                         {"addresses",
                          {{{"type", "InternalIP"}, {"address", "127.0.0.1"}},
                           {{"type", "Hostname"}, {"address", options_.node_name}}}}}}};
  RequestLog log;
  if (client_.MergePatch({"v1", "nodes", "", options_.node_name, "status"}, ValueFromJson(status), log).ok())
    last_heartbeat_ = Clock::now();
}

void NodeAgent::Impl::Run() {
  while (true) {
    RequestLog log;
    auto pods = client_.List({"v1", "pods", options_.namespace_name, "", ""}, "", log);
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (stopping_) break;
      if (pods.ok()) Tick(ValueToJson(*pods));
      Heartbeat();
      wake_.wait_for(lock, kPollInterval, [this] { return stopping_; });
      if (stopping_) break;
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [uid, pod] : pods_) StopPod(pod, kMaxGraceSeconds);
}

void NodeAgent::Impl::Tick(const Json& list) {
  std::set<std::string> seen;
  for (const Json& object : Array(list, "items")) {
    const Json& metadata = Field(object, "metadata");
    const std::string name = Str(metadata, "name"), uid = Str(metadata, "uid");
    const std::string node = Str(Field(object, "spec"), "nodeName");
    if (node.empty()) {
      Bind(name);
      continue;
    }
    if (node != options_.node_name) continue;
    seen.insert(uid);
    auto known = pods_.find(uid);
    if (!Str(metadata, "deletionTimestamp").empty()) {
      const int64_t grace = std::min(Int(metadata, "deletionGracePeriodSeconds",
                                         Int(Field(object, "spec"), "terminationGracePeriodSeconds", 30)),
                                     kMaxGraceSeconds);
      if (known != pods_.end()) {
        ForgetPod(known->second, grace);
        pods_.erase(known);
      }
      RequestLog log;
      client_.Delete({"v1", "pods", options_.namespace_name, name, ""}, {"", uid}, 0, log);
      continue;
    }
    if (known == pods_.end()) {
      // A Pod recreated under the same name (a StatefulSet's) replaces the old one's processes.
      for (auto old = pods_.begin(); old != pods_.end();) {
        if (old->second.name != name) {
          ++old;
          continue;
        }
        ForgetPod(old->second, kMaxGraceSeconds);
        old = pods_.erase(old);
      }
      Pod pod;
      pod.name = name;
      pod.uid = uid;
      pod.start_time = Rfc3339Now();
      known = pods_.emplace(uid, std::move(pod)).first;
    }
    Pod& pod = known->second;
    pod.object = object;
    if (pod.ip.empty()) pod.ip = AssignIP(object);
    if (!pod.prepared) {
      Status prepared = Prepare(pod);
      pod.prepared = prepared.ok();
      pod.waiting_message = prepared.ok() ? "" : prepared.error().message;
    }
    if (pod.prepared) Advance(pod);
    WriteStatus(pod);
  }
  for (auto pod = pods_.begin(); pod != pods_.end();) {
    if (seen.contains(pod->first)) {
      ++pod;
      continue;
    }
    ForgetPod(pod->second, kMaxGraceSeconds);
    pod = pods_.erase(pod);
  }
}

void NodeAgent::Impl::Bind(const std::string& name) {
  const Json binding = {{"apiVersion", "v1"},
                        {"kind", "Binding"},
                        {"metadata", {{"name", name}}},
                        {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", options_.node_name}}}};
  RequestLog log;
  client_.Create({"v1", "pods", options_.namespace_name, name, "binding"}, ValueFromJson(binding), log);
}

std::string NodeAgent::Impl::AssignIP(const Json& pod) {
  const std::string name = Str(Field(pod, "metadata"), "name");
  if (const int ordinal = Ordinal(name); ordinal >= 0 && IsOwnedByStatefulSet(pod)) {
    return options_.ip_prefix + std::to_string(kFirstStatefulSetHost + ordinal);
  }
  if (auto known = other_pod_ips_.find(name); known != other_pod_ips_.end()) return known->second;
  std::set<std::string> used;
  for (const auto& [other, ip] : other_pod_ips_) used.insert(ip);
  for (int host = kFirstOtherHost; host < 255; ++host) {
    const std::string ip = options_.ip_prefix + std::to_string(host);
    if (!used.contains(ip)) return other_pod_ips_[name] = ip;
  }
  return options_.ip_prefix + "254";
}

// The cluster DNS stand-in: a Pod of this agent's namespace that it runs,
// ran, or (by its StatefulSet ordinal) will run.
std::string NodeAgent::Impl::Resolve(const std::string& pod, const std::string& namespace_name) const {
  if (namespace_name != options_.namespace_name) return "";
  for (const auto& [uid, known] : pods_)
    if (known.name == pod && !known.ip.empty()) return known.ip;
  if (auto other = other_pod_ips_.find(pod); other != other_pod_ips_.end()) return other->second;
  if (const int ordinal = Ordinal(pod); ordinal >= 0)
    return options_.ip_prefix + std::to_string(kFirstStatefulSetHost + ordinal);
  return "";
}

Status NodeAgent::Impl::Prepare(Pod& pod) {
  const Json& spec = Field(pod.object, "spec");
  const std::string pod_dir = options_.root + "/pods/" + pod.uid;
  for (const Json& volume : Array(spec, "volumes")) {
    if (Status prepared = PrepareVolume(pod, volume); !prepared.ok()) return prepared;
  }
  std::map<std::string, std::string> base_environment;
  const std::string home = pod_dir + "/.home";
  std::error_code made;
  fs::create_directories(home, made);
  fs::create_directories(options_.root + "/pods/" + pod.name, made);
  base_environment["HOME"] = home;
  if (Field(spec, "automountServiceAccountToken") != Json(false)) {
    auto kubeconfig = ServiceAccountKubeconfig(pod);
    if (!kubeconfig.ok()) return kubeconfig.error();
    base_environment["KUBECONFIG"] = *kubeconfig;
  }
  std::vector<Container> init_containers, containers;
  for (const Json& container : Array(spec, "initContainers")) {
    auto built = BuildContainer(pod, container, base_environment);
    if (!built.ok()) return built.error();
    init_containers.push_back(std::move(*built));
  }
  for (const Json& container : Array(spec, "containers")) {
    auto built = BuildContainer(pod, container, base_environment);
    if (!built.ok()) return built.error();
    containers.push_back(std::move(*built));
  }
  pod.init_containers = std::move(init_containers);
  pod.containers = std::move(containers);
  return {};
}

Status NodeAgent::Impl::PrepareVolume(Pod& pod, const Json& volume) {
  const std::string name = Str(volume, "name");
  const std::string dir = VolumeHostDir(volume, options_.root, pod.uid, pod.name);
  std::map<std::string, std::string> files;  // key -> content
  const Json* items = nullptr;
  if (const Json& config_map = Field(volume, "configMap"); config_map.is_object()) {
    RequestLog log;
    auto object =
        client_.Get({"v1", "configmaps", options_.namespace_name, Str(config_map, "name"), ""}, log);
    if (!object.ok() &&
        !(object.error().code == ErrorCode::kNotFound && Field(config_map, "optional") == Json(true)))
      return object.error();
    if (object.ok()) {
      const Json json = ValueToJson(*object);
      for (const auto& [key, value] : Field(json, "data").items())
        if (value.is_string()) files[key] = value.get<std::string>();
      for (const auto& [key, value] : Field(json, "binaryData").items())
        if (value.is_string()) files[key] = Base64Decode(value.get<std::string>()).value_or("");
    }
    items = &Array(config_map, "items");
  } else if (const Json& secret = Field(volume, "secret"); secret.is_object()) {
    RequestLog log;
    auto object = client_.Get({"v1", "secrets", options_.namespace_name, Str(secret, "secretName"), ""}, log);
    if (!object.ok() &&
        !(object.error().code == ErrorCode::kNotFound && Field(secret, "optional") == Json(true)))
      return object.error();
    if (object.ok()) {
      const Json json = ValueToJson(*object);
      for (const auto& [key, value] : Field(json, "data").items())
        if (value.is_string()) files[key] = Base64Decode(value.get<std::string>()).value_or("");
    }
    items = &Array(secret, "items");
  }
  std::error_code made;
  fs::create_directories(dir, made);
  if (made) return Error{ErrorCode::kIo, "cannot create " + dir + ": " + made.message(), {}};
  pod.volume_dirs[name] = dir;
  if (Field(volume, "configMap").is_object() || Field(volume, "secret").is_object()) {
    // Paths in a configMap's files are rewritten with every container's mounts of the Pod.
    const Json& spec = Field(pod.object, "spec");
    std::map<std::string, std::string> volume_dirs;
    for (const Json& other : Array(spec, "volumes"))
      volume_dirs[Str(other, "name")] = VolumeHostDir(other, options_.root, pod.uid, pod.name);
    std::vector<Mount> mounts;
    for (const char* list : {"initContainers", "containers"})
      for (const Json& container : Array(spec, list)) AddMounts(container, volume_dirs, mounts);
    const bool is_config_map = Field(volume, "configMap").is_object();
    const auto resolve = [this](const std::string& pod_name, const std::string& namespace_name) {
      return Resolve(pod_name, namespace_name);
    };
    for (const auto& [key, content] : files) {
      std::string path = key;
      bool selected = items->empty();
      for (const Json& item : *items) {
        if (Str(item, "key") != key) continue;
        path = Str(item, "path");
        selected = true;
      }
      if (!selected) continue;
      const std::string written =
          is_config_map ? RewritePaths(ResolveNames(BindToPodIP(content, pod.ip), resolve), mounts) : content;
      if (Status status = WriteFile(dir + "/" + path, written); !status.ok()) return status;
    }
  }
  return {};
}

// A kubeconfig for the Pod's ServiceAccount from its token Secret (which the
// token controller creates a moment after the account).
Result<std::string> NodeAgent::Impl::ServiceAccountKubeconfig(Pod& pod) {
  const Json& spec = Field(pod.object, "spec");
  std::string account = Str(spec, "serviceAccountName");
  if (account.empty()) account = "default";
  RequestLog log;
  auto object = client_.Get({"v1", "serviceaccounts", options_.namespace_name, account, ""}, log);
  if (!object.ok()) return object.error();
  const Json account_json = ValueToJson(*object);  // named: a range-for keeps no temporary but the last alive
  for (const Json& reference : Array(account_json, "secrets")) {
    auto secret = client_.Get({"v1", "secrets", options_.namespace_name, Str(reference, "name"), ""}, log);
    if (!secret.ok()) continue;
    const Json json = ValueToJson(*secret);
    if (Str(json, "type") != "kubernetes.io/service-account-token") continue;
    const auto token = Base64Decode(Str(Field(json, "data"), "token"));
    const auto ca = Base64Decode(Str(Field(json, "data"), "ca.crt"));
    if (!token || token->empty() || !ca) continue;
    const std::string dir = options_.root + "/pods/" + pod.uid + "/.serviceaccount";
    if (Status written = WriteFile(dir + "/ca.crt", *ca); !written.ok()) return written.error();
    const std::string kubeconfig =
        "apiVersion: v1\nkind: Config\ncurrent-context: pod\nclusters:\n- name: cluster\n  cluster:\n"
        "    server: " +
        server_ + "\n    certificate-authority: " + dir +
        "/ca.crt\n"
        "users:\n- name: " +
        account + "\n  user:\n    token: " + *token +
        "\n"
        "contexts:\n- name: pod\n  context:\n    cluster: cluster\n    user: " +
        account + "\n    namespace: " + Str(Field(pod.object, "metadata"), "namespace") + "\n";
    if (Status written = WriteFile(dir + "/kubeconfig", kubeconfig); !written.ok()) return written.error();
    return dir + "/kubeconfig";
  }
  return Error{ErrorCode::kUnavailable, "no token Secret yet for the ServiceAccount " + account, {}};
}

Result<NodeAgent::Impl::Container> NodeAgent::Impl::BuildContainer(
    const Pod& pod, const Json& spec, const std::map<std::string, std::string>& base_environment) {
  Container container;
  container.name = Str(spec, "name");
  container.image = Str(spec, "image");
  if (container.image.empty()) container.image = "none";
  container.readiness_probe = Field(spec, "readinessProbe");
  container.ports = Array(spec, "ports");

  std::vector<Mount> mounts;
  AddMounts(spec, pod.volume_dirs, mounts);
  const auto resolve = [this](const std::string& pod_name, const std::string& namespace_name) {
    return Resolve(pod_name, namespace_name);
  };
  const auto finish = [&](const std::string& value) {
    return RewritePaths(ResolveNames(BindToPodIP(value, pod.ip), resolve), mounts);
  };

  const Json& metadata = Field(pod.object, "metadata");
  const std::map<std::string, std::string> fields = {
      {"metadata.name", pod.name},
      {"metadata.namespace", Str(metadata, "namespace")},
      {"metadata.uid", pod.uid},
      {"spec.nodeName", options_.node_name},
      {"spec.serviceAccountName", Str(Field(pod.object, "spec"), "serviceAccountName")},
      {"status.podIP", pod.ip},
      {"status.hostIP", "127.0.0.1"}};
  std::map<std::string, std::string> variables;
  std::vector<std::pair<std::string, std::string>> ordered;
  for (const Json& entry : Array(spec, "env")) {
    const std::string name = Str(entry, "name");
    std::string value = Expand(Str(entry, "value"), variables);
    const Json& from = Field(entry, "valueFrom");
    if (const Json& field = Field(from, "fieldRef"); field.is_object()) {
      const auto known = fields.find(Str(field, "fieldPath"));
      if (known == fields.end())
        return Error{ErrorCode::kInvalidArgument, "unsupported fieldRef " + Str(field, "fieldPath"), {}};
      value = known->second;
    } else if (const Json& key = Field(from, "configMapKeyRef"); key.is_object()) {
      RequestLog log;
      auto object = client_.Get({"v1", "configmaps", options_.namespace_name, Str(key, "name"), ""}, log);
      if (!object.ok()) return object.error();
      value = Str(Field(ValueToJson(*object), "data"), Str(key, "key").c_str());
    } else if (const Json& key = Field(from, "secretKeyRef"); key.is_object()) {
      RequestLog log;
      auto object = client_.Get({"v1", "secrets", options_.namespace_name, Str(key, "name"), ""}, log);
      if (!object.ok()) return object.error();
      value = Base64Decode(Str(Field(ValueToJson(*object), "data"), Str(key, "key").c_str())).value_or("");
    }
    value = finish(value);
    variables[name] = value;
    ordered.emplace_back(name, value);
  }
  for (const auto& [name, value] : base_environment) {
    if (variables.contains(name)) continue;
    variables[name] = value;
    ordered.emplace_back(name, value);
  }
  for (const auto& [name, value] : ordered) container.environment.push_back(name + "=" + value);

  for (const Json& arg : Array(spec, "command"))
    if (arg.is_string()) container.argv.push_back(finish(Expand(arg.get<std::string>(), variables)));
  if (container.argv.empty()) {
    return Error{
        ErrorCode::kInvalidArgument, "container " + container.name + " has no command (no images here)", {}};
  }
  for (const Json& arg : Array(spec, "args"))
    if (arg.is_string()) container.argv.push_back(finish(Expand(arg.get<std::string>(), variables)));
  if (auto binary = options_.binaries.find(fs::path(container.argv[0]).filename().string());
      binary != options_.binaries.end()) {
    container.argv[0] = binary->second;
  }
  for (const Json& arg : Array(Field(container.readiness_probe, "exec"), "command"))
    if (arg.is_string()) container.probe_argv.push_back(finish(Expand(arg.get<std::string>(), variables)));
  if (!container.probe_argv.empty()) {
    if (auto binary = options_.binaries.find(fs::path(container.probe_argv[0]).filename().string());
        binary != options_.binaries.end()) {
      container.probe_argv[0] = binary->second;
    }
  }
  return container;
}

void NodeAgent::Impl::StartContainer(Pod& pod, Container& container) {
  if (container.ever_started) ++container.restart_count;
  container.ever_started = true;
  container.ready = false;
  const std::string log = options_.root + "/pods/" + pod.name + "/" + container.name + ".log";
  auto started = ChildProcess::Start(container.argv, log, container.environment);
  container.started = Clock::now();
  container.started_at = Rfc3339Now();
  container.next_probe = container.started;
  if (!started.ok()) {
    container.exit_code = 127;
    container.finished_at = container.started_at;
    container.next_start = Clock::now() + container.backoff;
    container.backoff = std::min(container.backoff * 2, kMaxBackoff);
    return;
  }
  container.process = std::move(*started);
  container.last_pid = container.process.pid();
}

bool NodeAgent::Impl::Reap(Container& container) {
  if (container.process.pid() <= 0 || container.process.running()) return false;
  container.exit_code = container.process.Stop();
  container.finished_at = Rfc3339Now();
  container.ready = false;
  // Kubernetes resets the backoff of a container that ran for a while.
  if (Clock::now() - container.started > std::chrono::seconds(30))
    container.backoff = std::chrono::seconds(1);
  container.next_start = Clock::now() + container.backoff;
  container.backoff = std::min(container.backoff * 2, kMaxBackoff);
  return true;
}

void NodeAgent::Impl::Advance(Pod& pod) {
  const Clock::time_point now = Clock::now();
  for (Container& init : pod.init_containers) {
    if (init.completed) continue;
    if (Reap(init) && init.exit_code == 0) {
      init.completed = true;
      init.ready = true;
      continue;
    }
    if (init.process.pid() <= 0 && now >= init.next_start) StartContainer(pod, init);
    return;  // one at a time, each to completion
  }
  const std::string policy = Str(Field(pod.object, "spec"), "restartPolicy");
  for (Container& container : pod.containers) {
    if (container.completed) continue;
    if (Reap(container) && (policy == "Never" || (policy == "OnFailure" && container.exit_code == 0))) {
      container.completed = true;
      continue;
    }
    if (container.process.pid() <= 0) {
      if (now >= container.next_start) StartContainer(pod, container);
      continue;
    }
    if (container.readiness_probe.is_object()) {
      if (now >= container.next_probe) {
        const int64_t period = std::clamp<int64_t>(Int(container.readiness_probe, "periodSeconds", 1), 1, 2);
        container.next_probe = now + std::chrono::seconds(period);
        container.ready = Probe(pod, container);
      }
    } else {
      container.ready = true;
    }
  }
}

bool NodeAgent::Impl::Probe(const Pod& pod, Container& container) {
  const auto timeout =
      std::chrono::seconds(std::max<int64_t>(1, Int(container.readiness_probe, "timeoutSeconds", 1)));
  if (const Json& get = Field(container.readiness_probe, "httpGet"); get.is_object()) {
    std::string port = Str(get, "port");
    for (const Json& named : container.ports)
      if (Str(named, "name") == port) port = Str(named, "containerPort");
    std::string host = Str(get, "host");
    std::string path = Str(get, "path");
    const std::string url = (Str(get, "scheme") == "HTTPS" ? "https://" : "http://") +
                            (host.empty() ? pod.ip : host) + ":" + port + (path.empty() ? "/" : path);
    auto response = probe_http_.Send("GET", url, "", timeout);
    return response.ok() && response->status >= 200 && response->status < 300;
  }
  if (!container.probe_argv.empty()) {
    const std::string log = options_.root + "/pods/" + pod.name + "/" + container.name + ".probe.log";
    auto probe = ChildProcess::Start(container.probe_argv, log, container.environment);
    if (!probe.ok()) return false;
    const auto deadline = Clock::now() + timeout;
    while (probe->running() && Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (probe->running()) {
      probe->Stop(std::chrono::milliseconds(0));
      return false;
    }
    return probe->Stop() == 0;
  }
  return true;  // a probe kind not supported here (tcpSocket): ready while running
}

Json NodeAgent::Impl::ContainerStatus(const Pod& pod, const Container& container, bool init) const {
  const bool running = container.process.pid() > 0;
  Json state;
  if (running) {
    state = {{"running", {{"startedAt", container.started_at}}}};
  } else if (container.completed) {
    state = {{"terminated",
              {{"exitCode", container.exit_code},
               {"reason", container.exit_code == 0 ? "Completed" : "Error"},
               {"startedAt", container.started_at},
               {"finishedAt", container.finished_at},
               {"containerID", "ruleplane://" + std::to_string(container.last_pid)}}}};
  } else if (container.ever_started) {
    state = {
        {"waiting",
         {{"reason", "CrashLoopBackOff"},
          {"message", "exited with " + std::to_string(container.exit_code) + "; restarting with backoff"}}}};
  } else {
    const bool initializing = !init && std::any_of(pod.init_containers.begin(), pod.init_containers.end(),
                                                   [](const Container& c) { return !c.completed; });
    state = {{"waiting", {{"reason", initializing || init ? "PodInitializing" : "ContainerCreating"}}}};
  }
  Json status = {
      {"name", container.name}, {"ready", container.ready}, {"restartCount", container.restart_count},
      {"started", running},     {"state", state},           {"image", container.image},
      {"imageID", ""}};
  if (container.ever_started) {
    status["containerID"] = "ruleplane://" + std::to_string(container.last_pid);
    if (!running && !container.completed) {
      status["lastState"] = {{"terminated",
                              {{"exitCode", container.exit_code},
                               {"reason", "Error"},
                               {"startedAt", container.started_at},
                               {"finishedAt", container.finished_at}}}};
    }
  }
  return status;
}

void NodeAgent::Impl::WriteStatus(Pod& pod) {
  const auto all = [](const std::vector<Container>& list, auto predicate) {
    return std::all_of(list.begin(), list.end(), predicate);
  };
  const bool initialized =
      pod.prepared && all(pod.init_containers, [](const Container& c) { return c.completed; });
  const bool ready = initialized && !pod.containers.empty() &&
                     all(pod.containers, [](const Container& c) { return c.ready; });
  std::string phase = initialized ? "Running" : "Pending";
  if (initialized && !pod.containers.empty() &&
      all(pod.containers, [](const Container& c) { return c.completed; })) {
    phase = all(pod.containers, [](const Container& c) { return c.exit_code == 0; }) ? "Succeeded" : "Failed";
  }
  Json conditions = Json::array();
  for (const auto& [type, status] : std::vector<std::pair<std::string, bool>>{{"Initialized", initialized},
                                                                              {"Ready", ready},
                                                                              {"ContainersReady", ready},
                                                                              {"PodScheduled", true}}) {
    auto& [known_status, since] = pod.conditions[type];
    if (since.empty() || known_status != status) {
      known_status = status;
      since = Rfc3339Now();
    }
    conditions.push_back({{"type", type},
                          {"status", status ? "True" : "False"},
                          {"lastProbeTime", nullptr},
                          {"lastTransitionTime", since}});
  }
  Json init_statuses = Json::array(), statuses = Json::array();
  for (const Container& container : pod.init_containers)
    init_statuses.push_back(ContainerStatus(pod, container, true));
  for (const Container& container : pod.containers)
    statuses.push_back(ContainerStatus(pod, container, false));
  if (!pod.prepared) {
    for (const Json& spec : Array(Field(pod.object, "spec"), "containers")) {
      statuses.push_back(
          {{"name", Str(spec, "name")},
           {"ready", false},
           {"restartCount", 0},
           {"started", false},
           {"state", {{"waiting", {{"reason", "ContainerCreating"}, {"message", pod.waiting_message}}}}},
           {"image", Str(spec, "image").empty() ? "none" : Str(spec, "image")},
           {"imageID", ""}});
    }
  }
  Json status = {{"phase", phase},
                 {"hostIP", "127.0.0.1"},
                 {"podIP", pod.ip},
                 {"podIPs", {{{"ip", pod.ip}}}},
                 {"startTime", pod.start_time},
                 {"conditions", conditions},
                 {"containerStatuses", statuses}};
  if (!init_statuses.empty()) status["initContainerStatuses"] = init_statuses;
  const std::string text = status.dump();
  if (text == pod.written_status) return;
  RequestLog log;
  if (client_
          .MergePatch({"v1", "pods", options_.namespace_name, pod.name, "status"},
                      ValueFromJson(Json{{"status", status}}), log)
          .ok()) {
    pod.written_status = text;
  }
}

void NodeAgent::Impl::StopPod(Pod& pod, int64_t grace_seconds) {
  std::vector<ChildProcess*> running;
  for (auto* list : {&pod.init_containers, &pod.containers}) {
    for (Container& container : *list) {
      if (container.process.pid() <= 0) continue;
      container.process.Kill(SIGTERM);
      running.push_back(&container.process);
    }
  }
  const auto deadline = Clock::now() + std::chrono::seconds(grace_seconds);
  for (ChildProcess* process : running) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    process->Stop(std::max(left, std::chrono::milliseconds(0)));
  }
}

// Stops a Pod that is gone or going; its emptyDirs are moved aside, never deleted.
void NodeAgent::Impl::ForgetPod(Pod& pod, int64_t grace_seconds) {
  StopPod(pod, grace_seconds);
  std::error_code moved;
  const std::string pod_dir = options_.root + "/pods/" + pod.uid;
  if (fs::exists(pod_dir)) fs::rename(pod_dir, pod_dir + ".gone", moved);
}

std::string NodeAgent::Impl::PodIP(const std::string& pod) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return Resolve(pod, options_.namespace_name);
}

std::string NodeAgent::Impl::VolumeDir(const std::string& pod, const std::string& volume) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [uid, known] : pods_) {
    if (known.name != pod) continue;
    const auto dir = known.volume_dirs.find(volume);
    return dir != known.volume_dirs.end() ? dir->second : "";
  }
  return "";
}

int NodeAgent::Impl::Pid(const std::string& pod, const std::string& container) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [uid, known] : pods_) {
    if (known.name != pod) continue;
    for (const auto* list : {&known.init_containers, &known.containers})
      for (const Container& candidate : *list)
        if (candidate.name == container) return std::max(0, static_cast<int>(candidate.process.pid()));
  }
  return 0;
}

std::string RandomLoopbackPrefix() {
  std::random_device random;
  std::uniform_int_distribution<int> second(16, 250), third(0, 250);
  return "127." + std::to_string(second(random)) + "." + std::to_string(third(random)) + ".";
}

Result<std::unique_ptr<NodeAgent>> NodeAgent::Start(const KubeConfig& admin, NodeAgentOptions options) {
  if (options.root.empty() || options.ip_prefix.empty())
    return Error{ErrorCode::kInvalidArgument, "NodeAgent needs a root directory and an ip_prefix", {}};
  std::error_code made;
  fs::create_directories(options.root, made);
  auto impl = std::make_unique<Impl>(admin, std::move(options));
  if (Status registered = impl->RegisterNode(); !registered.ok()) return registered.error();
  Impl* running = impl.get();
  // Processes die with the thread that started them (PR_SET_PDEATHSIG), so
  // this one thread starts and stops them all.
  impl->thread = std::thread([running] { running->Run(); });
  return std::unique_ptr<NodeAgent>(new NodeAgent(std::move(impl)));
}

NodeAgent::NodeAgent(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

NodeAgent::~NodeAgent() {
  impl_->RequestStop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

std::string NodeAgent::PodIP(const std::string& pod) const { return impl_->PodIP(pod); }
std::string NodeAgent::VolumeDir(const std::string& pod, const std::string& volume) const {
  return impl_->VolumeDir(pod, volume);
}
int NodeAgent::Pid(const std::string& pod, const std::string& container) const {
  return impl_->Pid(pod, container);
}

}  // namespace ruleplane::testing
