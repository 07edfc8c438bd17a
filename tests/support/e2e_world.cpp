#include "tests/support/e2e_world.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "adapters/etcd/etcd_client.h"
#include "adapters/etcd/etcdctl_hashkv.h"
#include "adapters/kubernetes/manifests.h"
#include "tests/support/kube_objects.h"
#include "tests/support/source_paths.h"

namespace ruleplane::testing {
namespace {

namespace fs = std::filesystem;

}  // namespace

const KubeResource E2eWorld::kEtcdResource{"druid.gardener.cloud/v1alpha1", "etcds", "default", kEtcd, ""};

Result<std::unique_ptr<E2eWorld>> E2eWorld::Start(const std::string& root, const E2eWorldOptions& options) {
  std::unique_ptr<E2eWorld> world(new E2eWorld());
  world->root_ = root;
  // Each controller user with deploy/'s Role and nothing else.
  KubeTestBedOptions bed_options{.cluster = {.users = options.controller_users,
                                             .controller_manager = true,
                                             .audit_log = options.audit_log}};
  for (const std::string& user : options.controller_users)
    bed_options.bindings.emplace_back(user, "ruleplane");
  auto bed = KubeTestBed::Start(root, bed_options);
  if (!bed.ok()) return bed.error();
  world->bed_ = std::move(*bed);
  auto agent =
      NodeAgent::Start(world->bed_->kube().AdminConfig(), {.root = root + "/node",
                                                           .binaries = {{"ruleplane", RuleplaneBinary()}},
                                                           .ip_prefix = RandomLoopbackPrefix()});
  if (!agent.ok()) return agent.error();
  world->agent_ = std::move(*agent);
  return world;
}

E2eWorld::~E2eWorld() {
  agent_.reset();
  bed_.reset();
}

Result<ChildProcess> E2eWorld::StartController(const std::string& name, const std::string& user,
                                               const std::vector<std::string>& more,
                                               const std::string& failpoint) const {
  ControllerOptions controller{
      .name = "controller-" + name,
      .user = user,
      .journal = ControllerJournal(name),
      .flags = {"--allow-disruptive", "--resync-period", "2", "--min-disruptive-interval", "5",
                "--leader-elect-lease-duration", "6", "--leader-elect-renew-deadline", "4",
                "--leader-elect-retry-period", "1"}};
  controller.flags.insert(controller.flags.end(), more.begin(), more.end());
  if (!failpoint.empty()) controller.environment.push_back("RULEPLANE_FAILPOINT=" + failpoint);
  auto started = bed_->StartController(controller);
  if (!started.ok()) return started.error();
  return std::move(started->process);
}

std::string E2eWorld::ControllerJournal(const std::string& name) const {
  return root_ + "/journal-" + name + ".db";
}

std::string E2eWorld::ControllerLog(const std::string& name) const {
  return root_ + "/controller-" + name + ".log";
}

Status E2eWorld::EnableTls() {
  tls_ = true;
  return CreateTlsSecrets();
}

Status E2eWorld::CreateTlsSecrets() {
  std::vector<std::string> pod_ips;
  for (int i = 0; i < 5; ++i) pod_ips.push_back(agent_->PodIP(std::string(kEtcd) + "-" + std::to_string(i)));
  auto pki = TestPki::Create(root_ + "/pki", pod_ips);
  if (!pki.ok()) return pki.error();
  pki_ = *pki;
  const auto secret = SecretOfFiles;
  const Value ca = secret("etcd-ca", {{"ca.crt", pki->ca_cert}});
  const std::vector<std::pair<std::string, std::string>> member = {{"tls.crt", pki->member_cert},
                                                                   {"tls.key", pki->member_key}};
  RequestLog log;
  return ApplyManifests(
      admin(),
      {ca, secret("etcd-server-tls", member),
       secret("etcd-client-tls", {{"tls.crt", pki->client_cert}, {"tls.key", pki->client_key}}),
       secret("etcd-peer-ca", {{"ca.crt", pki->ca_cert}}), secret("etcd-peer-server-tls", member),
       secret("etcd-backup-ca", {{"ca.crt", pki->ca_cert}}), secret("etcd-backup-server-tls", member),
       secret("etcd-backup-client-tls", {{"tls.crt", pki->client_cert}, {"tls.key", pki->client_key}})},
      "default", log);
}

Status E2eWorld::CreateEtcd(int replicas, const std::string& store) {
  const std::string tls =
      tls_
          ? R"(,"clientUrlTls":{"tlsCASecretRef":{"name":"etcd-ca"},"serverTLSSecretRef":{"name":"etcd-server-tls"},)"
            R"("clientTLSSecretRef":{"name":"etcd-client-tls"}},)"
            R"("peerUrlTls":{"tlsCASecretRef":{"name":"etcd-peer-ca"},"serverTLSSecretRef":{"name":"etcd-peer-server-tls"}})"
          : "";
  const std::string backup_tls =
      tls_
          ? R"("tls":{"tlsCASecretRef":{"name":"etcd-backup-ca"},"serverTLSSecretRef":{"name":"etcd-backup-server-tls"},)"
            R"("clientTLSSecretRef":{"name":"etcd-backup-client-tls"}},)"
          : "";
  auto etcd = ParseJson(
      R"({"apiVersion":"druid.gardener.cloud/v1alpha1","kind":"Etcd","metadata":{"name":")" +
      std::string(kEtcd) + R"("},"spec":{"replicas":)" + std::to_string(replicas) +
      R"(,"labels":{"app.kubernetes.io/part-of":"etcd-main"},)"
      R"("etcd":{"clientPort":2379,"serverPort":2380,"quota":"1Gi")" +
      tls + R"(},"backup":{)" + backup_tls + R"("deltaSnapshotPeriod":"5s","store":)" + store + "}}}");
  if (!etcd.ok()) return etcd.error();
  RequestLog log;
  return ApplyManifests(admin(), {*etcd}, "default", log);
}

Value E2eWorld::Etcd() {
  RequestLog log;
  auto etcd = admin().Get(kEtcdResource, log);
  return etcd.ok() ? *etcd : Value::Null();
}

bool E2eWorld::HealthyWith(int replicas) { return EtcdHealthyWith(Etcd(), replicas); }

bool EtcdHealthyWith(const Value& etcd, int replicas) {
  const Value* members = ValueAt(etcd, {"status", "members"});
  if (members == nullptr || !members->is_list() ||
      members->list_value().size() != static_cast<size_t>(replicas))
    return false;
  for (const Value& member : members->list_value())
    if (TextAt(member, {"status"}) != "Ready") return false;
  int true_conditions = 0;
  const Value* conditions = ValueAt(etcd, {"status", "conditions"});
  for (const Value& condition :
       conditions != nullptr && conditions->is_list() ? conditions->list_value() : Value::List{}) {
    const std::string type = TextAt(condition, {"type"});
    if ((type == "Ready" || type == "AllMembersReady") && TextAt(condition, {"status"}) == "True")
      ++true_conditions;
  }
  return true_conditions == 2;
}

std::vector<std::string> E2eWorld::ClientUrls(int replicas) const {
  std::vector<std::string> urls;
  for (int i = 0; i < replicas; ++i)
    urls.push_back((tls_ ? "https://" : "http://") +
                   agent_->PodIP(std::string(kEtcd) + "-" + std::to_string(i)) + ":2379");
  return urls;
}

std::string E2eWorld::Describe(const std::vector<std::string>& controller_names) {
  const Value etcd = Etcd();
  const Value* status = ValueAt(etcd, {"status"});
  std::string text = "Etcd: " + (status != nullptr ? FormatJson(*status) : std::string("(no status)")) + "\n";
  const std::string plan = root_ + "/plan.txt";
  auto planned = ChildProcess::Start({RuleplaneBinary(), "plan", "--cluster", std::string("default/") + kEtcd,
                                      "--kubeconfig", kube().WriteKubeconfig("admin")},
                                     plan);
  if (planned.ok()) Eventually([&] { return !planned->running(); }, std::chrono::seconds(20));
  text += "a fresh plan:\n" + Slurp(plan);
  for (const std::string& name : controller_names)
    text += "controller " + name + ":\n" + TailOf(ControllerLog(name));
  RequestLog log;
  for (int i = 0; i < 5; ++i) {
    const std::string pod = std::string(kEtcd) + "-" + std::to_string(i);
    if (auto object = admin().Get({"v1", "pods", "default", pod, ""}, log); object.ok())
      text += "pod " + pod + ": uid " + TextAt(*object, {"metadata", "uid"}) + " status " +
              FormatJson(*ValueAt(*object, {"status"})) + "\n";
    for (const char* container : {"member-init", "etcd", "member-agent"}) {
      const std::string container_log = root_ + "/node/pods/" + pod + "/" + container + ".log";
      if (fs::exists(container_log)) text += pod + "/" + container + ":\n" + TailOf(container_log);
    }
  }
  return text;
}

void CorruptDatabaseHead(const std::string& db) {
  std::fstream file(db, std::ios::in | std::ios::out | std::ios::binary);
  const std::string garbage(8192, '\x5a');
  file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
}

bool CorruptedDatabaseKeptAside(const std::string& volume) {
  std::error_code ignored;
  for (const auto& entry : fs::directory_iterator(volume, ignored)) {
    const std::string aside_db = entry.path().string() + "/member/snap/db";
    if (entry.path().filename().string().rfind("new.etcd.", 0) == 0 && fs::exists(aside_db) &&
        Slurp(aside_db).substr(0, 8) == std::string(8, '\x5a'))
      return true;
  }
  return false;
}

std::vector<std::string> StepLines(const std::string& log) {
  std::vector<std::string> lines;
  std::stringstream text(log);
  for (std::string line; std::getline(text, line);) {
    auto entry = ParseJson(line);
    if (!entry.ok() || !entry->is_map() || entry->Find("step") == nullptr) continue;
    lines.push_back(TextAt(*entry, {"action"}) + " " + TextAt(*entry, {"target"}) + " " +
                    TextAt(*entry, {"state"}));
  }
  return lines;
}

std::string TailOf(const std::string& path, size_t bytes) {
  const std::string text = Slurp(path);
  return text.size() > bytes ? text.substr(text.size() - bytes) : text;
}

Status MembersAgree(const std::vector<std::string>& client_urls, std::chrono::seconds timeout,
                    const TlsConfig& tls) {
  EtcdClient client(EtcdClientConfig{client_urls, tls, std::chrono::seconds(5)});
  int64_t revision = 0;
  std::string silent, clusters;
  std::set<uint64_t> cluster_ids;
  const bool answered = Eventually(
      [&] {
        RequestLog log;
        revision = INT64_MAX;
        clusters.clear();
        cluster_ids.clear();
        for (const std::string& url : client_urls) {
          auto status = client.MemberStatus(url, log);
          if (!status.ok()) {
            silent = url + ": " + status.error().message;
            return false;
          }
          revision = std::min(revision, status->revision);
          cluster_ids.insert(status->cluster_id);
          clusters += (clusters.empty() ? "" : ", ") + url + " " + std::to_string(status->cluster_id);
        }
        return true;
      },
      timeout);
  if (!answered) return Error{ErrorCode::kUnavailable, "a member does not answer: " + silent, {}};
  if (cluster_ids.size() != 1)
    return Error{ErrorCode::kFailedPrecondition, "the members belong to different clusters: " + clusters, {}};
  std::optional<uint32_t> first;
  std::string hashes;
  bool differ = false;
  for (const std::string& url : client_urls) {
    auto hash = EndpointHashKV(url, revision, tls, std::chrono::seconds(10));
    if (!hash.ok())
      return Error{ErrorCode::kUnavailable, "no HashKV from " + url + ": " + hash.error().message, {}};
    hashes += (hashes.empty() ? "" : ", ") + url + " " + std::to_string(hash->hash);
    if (first && *first != hash->hash) differ = true;
    if (!first) first = hash->hash;
  }
  if (differ)
    return Error{ErrorCode::kFailedPrecondition,
                 "HashKV differs at revision " + std::to_string(revision) + ": " + hashes,
                 {}};
  return {};
}

}  // namespace ruleplane::testing
