#include "adapters/kubernetes/etcd_templates.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "engine/common/json_value.h"

namespace ruleplane {
namespace {

using Json = nlohmann::ordered_json;

std::string Text(const Value& object, std::initializer_list<std::string_view> keys,
                 const std::string& fallback = "") {
  const Value* value = ValueAt(object, keys);
  return value != nullptr && value->is_string() && !value->string_value().empty() ? value->string_value()
                                                                                  : fallback;
}

int64_t Int(const Value& object, std::initializer_list<std::string_view> keys, int64_t fallback) {
  const Value* value = ValueAt(object, keys);
  return value != nullptr && value->is_int() ? value->int_value() : fallback;
}

Json ToJson(const Value& value) { return Json::parse(FormatJson(value)); }

Result<Value> ToValue(const Json& json) { return ParseJson(json.dump()); }

Error Missing(const Value& etcd, const std::string& field, const std::string& why) {
  return Error{ErrorCode::kFailedPrecondition,
               "Etcd " + Text(etcd, {"metadata", "name"}) + ": " + field + " " + why,
               {}};
}

Json OwnerReference(const Value& etcd) {
  return Json{{"apiVersion", "druid.gardener.cloud/v1alpha1"},
              {"kind", "Etcd"},
              {"name", Text(etcd, {"metadata", "name"})},
              {"uid", Text(etcd, {"metadata", "uid"})},
              {"controller", true},
              {"blockOwnerDeletion", true}};
}

// etcd-druid's storage provider names for backup-restore (StorageProviderFromInfraProvider).
Result<std::string> StorageProvider(const std::string& provider) {
  static const std::pair<const char*, const char*> kNames[] = {
      {"aws", "S3"},          {"S3", "S3"},       {"azure", "ABS"},    {"ABS", "ABS"},
      {"gcp", "GCS"},         {"GCS", "GCS"},     {"alicloud", "OSS"}, {"OSS", "OSS"},
      {"openstack", "Swift"}, {"Swift", "Swift"}, {"dell", "ECS"},     {"ECS", "ECS"},
      {"openshift", "OCS"},   {"OCS", "OCS"},     {"Local", "Local"},  {"local", "Local"}};
  if (provider.empty()) return std::string();
  for (const auto& [given, name] : kNames) {
    if (provider == given) return std::string(name);
  }
  return Error{ErrorCode::kFailedPrecondition, "unsupported storage provider " + provider, {}};
}

// "<scheme>" of the client or peer URLs: https when that side has TLS.
std::string Scheme(const Value& etcd, std::string_view tls_field) {
  return ValueAt(etcd, {"spec", "etcd", tls_field}) != nullptr ? "https" : "http";
}

}  // namespace

Result<int64_t> QuantityBytes(const std::string& quantity) {
  static const std::pair<const char*, int64_t> kSuffixes[] = {{"Ki", int64_t{1} << 10},
                                                              {"Mi", int64_t{1} << 20},
                                                              {"Gi", int64_t{1} << 30},
                                                              {"Ti", int64_t{1} << 40},
                                                              {"k", 1000},
                                                              {"M", 1000000},
                                                              {"G", 1000000000},
                                                              {"T", 1000000000000}};
  size_t digits = 0;
  while (digits < quantity.size() && quantity[digits] >= '0' && quantity[digits] <= '9') ++digits;
  const std::string suffix = quantity.substr(digits);
  int64_t unit = suffix.empty() ? 1 : 0;
  for (const auto& [name, factor] : kSuffixes) {
    if (suffix == name) unit = factor;
  }
  if (digits == 0 || digits > 12 || unit == 0) {
    return Error{
        ErrorCode::kInvalidArgument,
        "\"" + quantity + "\" is not a whole quantity of bytes (digits, then Ki, Mi, Gi, Ti, k, M, G or T)",
        {}};
  }
  return std::stoll(quantity.substr(0, digits)) * unit;
}

std::string EtcdConfigMapName(const Value& etcd) {
  return "etcd-bootstrap-" + Text(etcd, {"metadata", "uid"}).substr(0, 6);
}

Result<Value> EtcdConfigMap(const Value& etcd, int64_t replicas) {
  const std::string name = Text(etcd, {"metadata", "name"});
  const std::string ns = Text(etcd, {"metadata", "namespace"});
  const std::string uid = Text(etcd, {"metadata", "uid"});
  if (uid.size() < 6) return Missing(etcd, "metadata.uid", "is not set");
  auto quota = QuantityBytes(Text(etcd, {"spec", "etcd", "quota"}, "8Gi"));
  if (!quota.ok()) return Missing(etcd, "spec.etcd.quota", quota.error().message);
  const std::string peer = Scheme(etcd, "peerUrlTls"), client = Scheme(etcd, "clientUrlTls");
  const std::string peer_port = std::to_string(Int(etcd, {"spec", "etcd", "serverPort"}, 2380));
  const std::string client_port = std::to_string(Int(etcd, {"spec", "etcd", "clientPort"}, 2379));
  std::string initial_cluster;
  for (int64_t i = 0; i < std::max<int64_t>(replicas, 1); ++i) {
    const std::string member = name + "-" + std::to_string(i);
    initial_cluster += (i == 0 ? "" : ",") + member + "=" + peer + "://" + member + "." + name + "-peer." +
                       ns + ".svc:" + peer_port;
  }
  YAML::Emitter yaml;
  yaml << YAML::BeginMap;
  yaml << YAML::Key << "name" << YAML::Value << "etcd-" + uid.substr(0, 6);
  yaml << YAML::Key << "data-dir" << YAML::Value << "/var/etcd/data/new.etcd";
  yaml << YAML::Key << "metrics" << YAML::Value << "basic";
  yaml << YAML::Key << "snapshot-count" << YAML::Value << 75000;
  yaml << YAML::Key << "enable-v2" << YAML::Value << false;
  yaml << YAML::Key << "quota-backend-bytes" << YAML::Value << *quota;
  yaml << YAML::Key << "initial-cluster-token" << YAML::Value << "etcd-cluster";
  yaml << YAML::Key << "initial-cluster-state" << YAML::Value << "new";
  yaml << YAML::Key << "initial-cluster" << YAML::Value << initial_cluster;
  yaml << YAML::Key << "auto-compaction-mode" << YAML::Value
       << Text(etcd, {"spec", "sharedConfig", "autoCompactionMode"}, "periodic");
  yaml << YAML::Key << "auto-compaction-retention" << YAML::Value
       << Text(etcd, {"spec", "sharedConfig", "autoCompactionRetention"}, "30m");
  yaml << YAML::Key << "listen-peer-urls" << YAML::Value << peer + "://0.0.0.0:" + peer_port;
  yaml << YAML::Key << "listen-client-urls" << YAML::Value << client + "://0.0.0.0:" + client_port;
  // Placeholders "<scheme>@<service>@<namespace>@<port>": each member's own
  // URLs are filled in beside it (ruleplane member-init --peer-url/--client-url).
  yaml << YAML::Key << "initial-advertise-peer-urls" << YAML::Value
       << peer + "@" + name + "-peer@" + ns + "@" + peer_port;
  yaml << YAML::Key << "advertise-client-urls" << YAML::Value
       << client + "@" + name + "-peer@" + ns + "@" + client_port;
  for (const auto& [field, side] : {std::pair{"clientUrlTls", "client"}, std::pair{"peerUrlTls", "peer"}}) {
    if (ValueAt(etcd, {"spec", "etcd", field}) == nullptr) continue;
    const std::string dir = std::string("/var/etcd/ssl/") + side;
    yaml << YAML::Key << std::string(side) + "-transport-security" << YAML::Value << YAML::BeginMap;
    yaml << YAML::Key << "cert-file" << YAML::Value << dir + "/server/tls.crt";
    yaml << YAML::Key << "key-file" << YAML::Value << dir + "/server/tls.key";
    yaml << YAML::Key << "client-cert-auth" << YAML::Value << true;
    yaml << YAML::Key << "trusted-ca-file" << YAML::Value
         << dir + "/ca/" + Text(etcd, {"spec", "etcd", field, "tlsCASecretRef", "dataKey"}, "ca.crt");
    yaml << YAML::Key << "auto-tls" << YAML::Value << false;
    yaml << YAML::EndMap;
  }
  yaml << YAML::EndMap;
  return ToValue(Json{{"apiVersion", "v1"},
                      {"kind", "ConfigMap"},
                      {"metadata",
                       {{"name", EtcdConfigMapName(etcd)},
                        {"namespace", ns},
                        {"labels", {{"name", "etcd"}, {"instance", name}}},
                        {"ownerReferences", Json::array({OwnerReference(etcd)})}}},
                      {"data", {{"etcd.conf.yaml", std::string(yaml.c_str()) + "\n"}}}});
}

int64_t InitialClusterSize(const Value& config_map) {
  const std::string text = Text(config_map, {"data", "etcd.conf.yaml"});
  try {
    const YAML::Node config = YAML::Load(text);
    if (!config.IsMap() || !config["initial-cluster"]) return -1;
    const std::string members = config["initial-cluster"].as<std::string>();
    if (members.empty()) return -1;
    return 1 + static_cast<int64_t>(std::count(members.begin(), members.end(), ','));
  } catch (const YAML::Exception&) {
    return -1;
  }
}

namespace {

Json SelectorLabels(const std::string& name) { return Json{{"name", "etcd"}, {"instance", name}}; }

Json ObjectMeta(const Value& etcd, const std::string& object_name) {
  const std::string name = Text(etcd, {"metadata", "name"});
  return Json{{"name", object_name},
              {"namespace", Text(etcd, {"metadata", "namespace"})},
              {"labels", SelectorLabels(name)},
              {"ownerReferences", Json::array({OwnerReference(etcd)})}};
}

// "<scheme>://<pod>.<etcd>-peer.<namespace>.svc:<port>", the pod's DNS name
// through the headless peer Service.
std::string MemberUrl(const Value& etcd, std::string_view tls_field, int64_t port) {
  const std::string name = Text(etcd, {"metadata", "name"});
  return Scheme(etcd, tls_field) + "://$(POD_NAME)." + name + "-peer." +
         Text(etcd, {"metadata", "namespace"}) + ".svc:" + std::to_string(port);
}

}  // namespace

Value EtcdPodSelector(const Value& etcd) {
  auto selector = ToValue(Json{{"matchLabels", SelectorLabels(Text(etcd, {"metadata", "name"}))}});
  return selector.ok() ? *selector : Value::Null();
}

Result<Value::List> EtcdServices(const Value& etcd) {
  const std::string name = Text(etcd, {"metadata", "name"});
  if (Text(etcd, {"metadata", "uid"}).empty()) return Missing(etcd, "metadata.uid", "is not set");
  const int64_t client_port = Int(etcd, {"spec", "etcd", "clientPort"}, 2379);
  const int64_t peer_port = Int(etcd, {"spec", "etcd", "serverPort"}, 2380);
  const Json client = {
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata", ObjectMeta(etcd, name + "-client")},
      {"spec",
       {{"type", "ClusterIP"},
        {"selector", SelectorLabels(name)},
        {"ports", Json::array({{{"name", "client"}, {"port", client_port}, {"targetPort", client_port}}})}}}};
  const Json peer = {
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata", ObjectMeta(etcd, name + "-peer")},
      {"spec",
       {{"clusterIP", "None"},
        {"publishNotReadyAddresses", true},
        {"selector", SelectorLabels(name)},
        {"ports", Json::array({{{"name", "peer"}, {"port", peer_port}, {"targetPort", peer_port}}})}}}};
  Value::List services;
  for (const Json& service : {client, peer}) {
    auto value = ToValue(service);
    if (!value.ok()) return value.error();
    services.push_back(*std::move(value));
  }
  return services;
}

int64_t RenderedGeneration(const Value& statefulset) {
  const std::string text = Text(statefulset, {"metadata", "annotations", kRenderedGenerationAnnotation});
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::stoll(text);
}

Result<Value> EtcdStatefulSet(const Value& etcd, int64_t replicas) {
  const std::string name = Text(etcd, {"metadata", "name"});
  if (Text(etcd, {"metadata", "uid"}).size() < 6) return Missing(etcd, "metadata.uid", "is not set");
  const int64_t client_port = Int(etcd, {"spec", "etcd", "clientPort"}, 2379);
  const int64_t peer_port = Int(etcd, {"spec", "etcd", "serverPort"}, 2380);
  const std::string client_url = MemberUrl(etcd, "clientUrlTls", client_port);
  const std::string storage = Text(etcd, {"spec", "storageCapacity"}, "16Gi");
  const std::string claim = Text(etcd, {"spec", "volumeClaimTemplate"}, name);

  const Json env = {
      {{"name", "POD_NAME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}},
      {{"name", "POD_NAMESPACE"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.namespace"}}}}}}};
  Json mounts = {{{"name", claim}, {"mountPath", "/var/etcd/data"}},
                 {{"name", "etcd-config"}, {"mountPath", "/var/etcd/config"}}};
  Json volumes = {{{"name", "etcd-config"},
                   {"configMap",
                    {{"name", EtcdConfigMapName(etcd)},
                     {"items", Json::array({{{"key", "etcd.conf.yaml"}, {"path", "etcd.conf.yaml"}}})}}}}};
  Json init_args = {"member-init",
                    "--etcd-name=" + name,
                    "--name=$(POD_NAME)",
                    "--namespace=$(POD_NAMESPACE)",
                    "--peer-url=" + MemberUrl(etcd, "peerUrlTls", peer_port),
                    "--client-url=" + client_url,
                    "--data-dir=/var/etcd/data/new.etcd",
                    "--config-template=/var/etcd/config/etcd.conf.yaml",
                    "--config-out=/var/etcd/data/etcd.conf.yaml"};
  Json agent_args = {"member-agent",
                     "--etcd=" + name,
                     "--name=$(POD_NAME)",
                     "--namespace=$(POD_NAMESPACE)",
                     "--client-url=" + client_url,
                     "--endpoints=" + client_url};
  // ruleplane's backup store is a local directory: etcd-druid's Local
  // provider, a host directory per container. Other providers: no backups.
  const Value* store = ValueAt(etcd, {"spec", "backup", "store"});
  auto provider = StorageProvider(store != nullptr ? Text(*store, {"provider"}) : "");
  if (provider.ok() && *provider == "Local") {
    const std::string container = Text(*store, {"container"}, name);
    volumes.push_back(
        {{"name", "backup-store"},
         {"hostPath",
          {{"path", "/etc/gardener/local-backupbuckets/" + container}, {"type", "DirectoryOrCreate"}}}});
    mounts.push_back({{"name", "backup-store"}, {"mountPath", "/var/etcd/backup"}});
    const std::string flag = "--backup-store=/var/etcd/backup/" + Text(*store, {"prefix"}, name);
    init_args.push_back(flag);
    agent_args.push_back(flag);
    if (const std::string period = Text(etcd, {"spec", "backup", "deltaSnapshotPeriod"}); !period.empty()) {
      // "20s" as etcd-druid writes it; ruleplane takes whole seconds.
      if (period.back() == 's' && period.find_first_not_of("0123456789") == period.size() - 1)
        agent_args.push_back("--delta-snapshot-period=" + period.substr(0, period.size() - 1));
    }
    if (const std::string schedule = Text(etcd, {"spec", "backup", "fullSnapshotSchedule"});
        !schedule.empty())
      agent_args.push_back("--schedule=" + schedule);
  }

  const Json pod_spec = {
      {"serviceAccountName", "ruleplane-member"},
      {"terminationGracePeriodSeconds", 30},
      {"initContainers", Json::array({{{"name", "member-init"},
                                       {"image", kMemberImage},
                                       {"command", Json::array({"ruleplane"})},
                                       {"args", init_args},
                                       {"env", env},
                                       {"volumeMounts", mounts}}})},
      {"containers",
       Json::array({{{"name", "etcd"},
                     {"image", kMemberImage},
                     {"command", Json::array({"etcd", "--config-file=/var/etcd/data/etcd.conf.yaml"})},
                     {"ports", Json::array({{{"name", "client"}, {"containerPort", client_port}},
                                            {{"name", "peer"}, {"containerPort", peer_port}}})},
                     {"readinessProbe",
                      {{"httpGet",
                        {{"path", "/health"},
                         {"port", client_port},
                         {"scheme", Scheme(etcd, "clientUrlTls") == "https" ? "HTTPS" : "HTTP"}}},
                       {"periodSeconds", 5}}},
                     {"volumeMounts", Json::array({mounts[0]})}},
                    {{"name", "member-agent"},
                     {"image", kMemberImage},
                     {"command", Json::array({"ruleplane"})},
                     {"args", agent_args},
                     {"env", env},
                     {"volumeMounts", mounts}}})},
      {"volumes", volumes}};
  auto pod_template = ToValue(Json{{"metadata", {{"labels", SelectorLabels(name)}}}, {"spec", pod_spec}});
  if (!pod_template.ok()) return pod_template.error();
  // The init container runs the member-agent's image (both are ruleplane).
  Json rendered = ToJson(PodTemplateForSpec(etcd, *pod_template));
  rendered["spec"]["initContainers"][0]["image"] = rendered["spec"]["containers"][1]["image"];
  Json metadata = ObjectMeta(etcd, name);
  metadata["annotations"] = {
      {kRenderedGenerationAnnotation, std::to_string(Int(etcd, {"metadata", "generation"}, 0))}};
  return ToValue(Json{{"apiVersion", "apps/v1"},
                      {"kind", "StatefulSet"},
                      {"metadata", metadata},
                      {"spec",
                       {{"replicas", replicas},
                        {"serviceName", name + "-peer"},
                        {"podManagementPolicy", "Parallel"},
                        {"updateStrategy", {{"type", "RollingUpdate"}}},
                        {"selector", ToJson(EtcdPodSelector(etcd))},
                        {"template", rendered},
                        {"volumeClaimTemplates",
                         Json::array({{{"metadata", {{"name", claim}}},
                                       {"spec",
                                        {{"accessModes", Json::array({"ReadWriteOnce"})},
                                         {"resources", {{"requests", {{"storage", storage}}}}}}}}})}}}});
}

std::string CompactionJobName(const Value& etcd) { return Text(etcd, {"metadata", "name"}) + "-compactor"; }

Result<Value> CompactionJob(const Value& etcd) {
  const std::string name = Text(etcd, {"metadata", "name"});
  const Value* store = ValueAt(etcd, {"spec", "backup", "store"});
  if (store == nullptr) return Missing(etcd, "spec.backup.store", "is not set: there is nothing to compact");
  // etcd-druid falls back to its own image list; ruleplane ships none.
  const std::string image = Text(etcd, {"spec", "backup", "image"});
  if (image.empty())
    return Missing(etcd, "spec.backup.image", "is not set: the compaction job needs an image");
  auto provider = StorageProvider(Text(*store, {"provider"}));
  if (!provider.ok()) return Missing(etcd, "spec.backup.store.provider", provider.error().message);
  auto quota = QuantityBytes(Text(etcd, {"spec", "etcd", "quota"}, "8Gi"));
  if (!quota.ok()) return Missing(etcd, "spec.etcd.quota", quota.error().message);
  const std::string container = Text(*store, {"container"});
  const std::string secret = Text(*store, {"secretRef", "name"});

  Json args = {"compact",
               "--data-dir=/var/etcd/data/compaction.etcd",
               "--restoration-temp-snapshots-dir=/var/etcd/data/compaction.restoration.temp",
               "--snapstore-temp-directory=/var/etcd/data/tmp",
               "--metrics-scrape-wait-duration=0s",
               "--enable-snapshot-lease-renewal=true",
               "--full-snapshot-lease-name=" + name + "-full-snap",
               "--delta-snapshot-lease-name=" + name + "-delta-snap",
               "--embedded-etcd-quota-bytes=" + std::to_string(*quota)};
  if (!provider->empty()) args.push_back("--storage-provider=" + *provider);
  if (!Text(*store, {"prefix"}).empty()) args.push_back("--store-prefix=" + Text(*store, {"prefix"}));
  if (!container.empty()) args.push_back("--store-container=" + container);

  Json env = {
      {{"name", "POD_NAME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}},
      {{"name", "POD_NAMESPACE"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.namespace"}}}}}},
      {{"name", "STORAGE_CONTAINER"}, {"value", container}}};
  Json mounts = {{{"name", "etcd-workspace-dir"}, {"mountPath", "/var/etcd/data"}}};
  Json volumes = {{{"name", "etcd-workspace-dir"}, {"emptyDir", Json::object()}}};
  if (*provider == "Local") {
    volumes.push_back(
        {{"name", "host-storage"},
         {"hostPath", {{"path", "/etc/gardener/local-backupbuckets/" + container}, {"type", "Directory"}}}});
    mounts.push_back({{"name", "host-storage"}, {"mountPath", container}});
  } else if (!provider->empty()) {
    if (secret.empty()) return Missing(etcd, "spec.backup.store.secretRef", "is not set for " + *provider);
    const bool gcs = *provider == "GCS";
    static const std::pair<const char*, const char*> kCredentials[] = {
        {"S3", "AWS_APPLICATION_CREDENTIALS"},
        {"ABS", "AZURE_APPLICATION_CREDENTIALS"},
        {"Swift", "OPENSTACK_APPLICATION_CREDENTIALS"},
        {"OSS", "ALICLOUD_APPLICATION_CREDENTIALS"},
        {"OCS", "OPENSHIFT_APPLICATION_CREDENTIALS"}};
    for (const auto& [for_provider, variable] : kCredentials) {
      if (*provider == for_provider) env.push_back({{"name", variable}, {"value", "/var/etcd-backup"}});
    }
    if (gcs) {
      env.push_back({{"name", "GOOGLE_APPLICATION_CREDENTIALS"}, {"value", "/var/.gcp/serviceaccount.json"}});
    }
    volumes.push_back({{"name", "etcd-backup"}, {"secret", {{"secretName", secret}}}});
    mounts.push_back({{"name", "etcd-backup"}, {"mountPath", gcs ? "/var/.gcp/" : "/var/etcd-backup/"}});
  }
  Json resources = {{"requests", {{"cpu", "600m"}, {"memory", "3Gi"}}}};
  if (const Value* given = ValueAt(etcd, {"spec", "backup", "compactionResources"}))
    resources = ToJson(*given);
  const Json labels = {
      {"name", "etcd-backup-compaction"}, {"instance", name}, {"gardener.cloud/role", "controlplane"}};
  constexpr int64_t kActiveDeadlineSeconds = 3 * 3600;  // etcd-druid's --active-deadline-duration
  return ToValue(Json{{"apiVersion", "batch/v1"},
                      {"kind", "Job"},
                      {"metadata",
                       {{"name", CompactionJobName(etcd)},
                        {"namespace", Text(etcd, {"metadata", "namespace"})},
                        {"labels", labels},
                        {"ownerReferences", Json::array({OwnerReference(etcd)})}}},
                      {"spec",
                       {{"activeDeadlineSeconds", kActiveDeadlineSeconds},
                        {"completions", 1},
                        {"backoffLimit", 0},
                        {"template",
                         {{"metadata", {{"labels", labels}}},
                          {"spec",
                           {{"activeDeadlineSeconds", kActiveDeadlineSeconds},
                            {"serviceAccountName", name},
                            {"restartPolicy", "Never"},
                            {"containers", Json::array({{{"name", "compact-backup"},
                                                         {"image", image},
                                                         {"imagePullPolicy", "IfNotPresent"},
                                                         {"args", args},
                                                         {"env", env},
                                                         {"resources", resources},
                                                         {"volumeMounts", mounts}}})},
                            {"volumes", volumes}}}}}}}});
}

Value PodTemplateForSpec(const Value& etcd, const Value& pod_template) {
  Json result = ToJson(pod_template);
  const Value* spec = ValueAt(etcd, {"spec"});
  if (spec == nullptr) return pod_template;
  for (const char* field : {"labels", "annotations"}) {
    if (const Value* given = ValueAt(*spec, {field}); given != nullptr && given->is_map()) {
      const Json entries = ToJson(*given);
      for (auto entry = entries.begin(); entry != entries.end(); ++entry) {
        result["metadata"][field][entry.key()] = entry.value();
      }
    }
  }
  if (const std::string priority = Text(*spec, {"priorityClassName"}); !priority.empty()) {
    result["spec"]["priorityClassName"] = priority;
  }
  if (result.contains("spec") && result["spec"].contains("containers")) {
    for (Json& container : result["spec"]["containers"]) {
      const std::string name = container.value("name", "");
      const char* section = name == "etcd"                                       ? "etcd"
                            : name == "backup-restore" || name == "member-agent" ? "backup"
                                                                                 : nullptr;
      if (section == nullptr) continue;
      if (const std::string image = Text(*spec, {section, "image"}); !image.empty())
        container["image"] = image;
      if (const Value* resources = ValueAt(*spec, {section, "resources"}))
        container["resources"] = ToJson(*resources);
    }
  }
  auto value = ToValue(result);
  return value.ok() ? *value : pod_template;
}

}  // namespace ruleplane
