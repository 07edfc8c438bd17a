// The StatefulSet <etcd> of the member pods, and its selector (etcd_templates.h).
#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/object_fields.h"
#include "adapters/kubernetes/templates/template_parts.h"
#include "engine/common/sha256.h"
#include "engine/common/time_util.h"

namespace ruleplane {
namespace {

// "<scheme>://<pod>.<etcd>-peer.<namespace>.svc:<port>", the pod's DNS name
// through the headless peer Service.
std::string MemberUrl(const Value& etcd, std::string_view tls_field, int64_t port) {
  return Scheme(etcd, tls_field) + "://" + MemberDnsName(etcd, "$(POD_NAME)") + ":" + std::to_string(port);
}

// The backup sidecar's snapshot flags from spec.backup, as etcd-druid's
// StatefulSet builder passes them to etcd-backup-restore
// (internal/component/statefulset/builder.go, getBackupStoreCommandArgs):
// the schedule, delta period and delta retention period only when set, the
// delta memory limit (100Mi unless set), the garbage collection policy
// (LimitBased unless set: etcd-druid's default, not etcd-backup-restore's)
// with --max-backups (7 unless set) when LimitBased, the collection period
// only when set, and the compression (gzip unless spec.backup.compression
// says otherwise) always. A value that does not parse is refused here,
// naming the field, rather than in every Pod.
Status AddSnapshotArgs(const Value& etcd, Json& args) {
  const Value* backup = ValueAt(etcd, {"spec", "backup"});
  // spec.backup.<field>, when set, as --<flag>=<it>; refused unless a Go duration.
  auto add_duration = [&](std::string_view field, const std::string& flag) -> Status {
    const std::string text = FieldText(*backup, {field});
    if (text.empty()) return {};
    if (auto parsed = ParseDuration(text); !parsed.ok() || parsed->nanos < 0)
      return Missing(etcd, "spec.backup." + std::string(field),
                     "is not a Go duration such as 20s or 1m30s: '" + text + "'");
    args.push_back(flag + "=" + text);
    return {};
  };
  if (const std::string schedule = FieldText(*backup, {"fullSnapshotSchedule"}); !schedule.empty())
    args.push_back("--schedule=" + schedule);
  if (Status added = add_duration("deltaSnapshotPeriod", "--delta-snapshot-period"); !added.ok())
    return added;
  if (Status added = add_duration("deltaSnapshotRetentionPeriod", "--delta-snapshot-retention-period");
      !added.ok())
    return added;
  int64_t memory_limit = int64_t{100} << 20;
  if (const std::string limit = FieldText(*backup, {"deltaSnapshotMemoryLimit"}); !limit.empty()) {
    auto bytes = QuantityBytes(limit);
    if (!bytes.ok()) return Missing(etcd, "spec.backup.deltaSnapshotMemoryLimit", bytes.error().message);
    memory_limit = *bytes;
  } else {
    memory_limit = FieldInt(*backup, {"deltaSnapshotMemoryLimit"}, memory_limit);
  }
  args.push_back("--delta-snapshot-memory-limit=" + std::to_string(memory_limit));
  const std::string gc_policy = FieldText(*backup, {"garbageCollectionPolicy"}, "LimitBased");
  if (gc_policy != "Exponential" && gc_policy != "LimitBased")
    return Missing(etcd, "spec.backup.garbageCollectionPolicy",
                   "'" + gc_policy + "' is not Exponential or LimitBased");
  args.push_back("--garbage-collection-policy=" + gc_policy);
  if (gc_policy == "LimitBased") {
    const Value* max_backups = ValueAt(*backup, {"maxBackupsLimitBasedGC"});
    if (max_backups != nullptr && (!max_backups->is_int() || max_backups->int_value() < 1))
      return Missing(etcd, "spec.backup.maxBackupsLimitBasedGC", "is not a whole number of at least 1");
    args.push_back("--max-backups=" + std::to_string(max_backups != nullptr ? max_backups->int_value() : 7));
  }
  if (Status added = add_duration("garbageCollectionPeriod", "--garbage-collection-period"); !added.ok())
    return added;
  const Value* enabled = ValueAt(*backup, {"compression", "enabled"});
  const bool compress = enabled == nullptr || !enabled->is_bool() || enabled->bool_value();
  const std::string policy = FieldText(*backup, {"compression", "policy"}, "gzip");
  if (compress && policy != "gzip" && policy != "zlib")
    return Missing(etcd, "spec.backup.compression.policy",
                   "'" + policy + "' is not one ruleplane writes (gzip or zlib)");
  args.push_back(std::string("--compress-snapshots=") + (compress ? "true" : "false"));
  args.push_back("--compression-policy=" + policy);
  return {};
}

// The TLS Secrets of spec.etcd.clientUrlTls and peerUrlTls as volumes (mode
// 0640), and the mounts of the etcd container (the CA and server Secrets of
// both sides) and of member-init and member-agent (the client CA and the client
// Secret, which they present to etcd with --cacert, --cert and --key), as
// etcd-druid's StatefulSet builder has them
// (internal/component/statefulset/builder.go: getClientTLSVolumes,
// getPeerTLSVolumes, getEtcdContainerSecretVolumeMounts,
// getBackupRestoreContainerSecretVolumeMounts). etcd-druid also mounts the
// client Secret into the etcd container, for etcd-wrapper; ruleplane's etcd
// container runs etcd itself, which does not need it. spec.backup.tls: the
// member agent serves its API over HTTPS with the server Secret
// (etcd-backup-restore's --server-cert, --server-key) and verifies the
// leader's agent, when it forwards a request, against the CA Secret
// (--server-ca); etcd-druid's backup-restore-client-tls volume is for
// etcd-wrapper, which ruleplane does not run. A Secret without a name is
// refused here, naming the field.
Status AddTlsSecrets(const Value& etcd, Json& volumes, Json& etcd_mounts, Json& member_mounts,
                     Json& member_args, Json& agent_args) {
  // The Secret that the TLS settings at `field` name at `ref`.
  auto add = [&](const Value& settings, const std::string& field, const char* ref,
                 const TlsSecretMount& secret, std::initializer_list<Json*> mounted_in) -> Status {
    const std::string name = FieldText(settings, {ref, "name"});
    if (name.empty()) return Missing(etcd, field + "." + ref + ".name", "is not set");
    volumes.push_back({{"name", secret.volume}, {"secret", {{"secretName", name}, {"defaultMode", 0640}}}});
    for (Json* mounts : mounted_in)
      mounts->push_back({{"name", secret.volume}, {"mountPath", secret.path}, {"readOnly", true}});
    return {};
  };
  if (const Value* client = ValueAt(etcd, {"spec", "etcd", "clientUrlTls"}); client != nullptr) {
    const std::string field = "spec.etcd.clientUrlTls";
    for (Status added : {add(*client, field, "tlsCASecretRef", kEtcdCa, {&etcd_mounts, &member_mounts}),
                         add(*client, field, "serverTLSSecretRef", kEtcdServerTls, {&etcd_mounts}),
                         add(*client, field, "clientTLSSecretRef", kEtcdClientTls, {&member_mounts})})
      if (!added.ok()) return added;
    member_args.push_back("--cacert=" + TlsCaFile(*client, kEtcdCa));
    member_args.push_back(std::string("--cert=") + kEtcdClientTls.path + "/tls.crt");
    member_args.push_back(std::string("--key=") + kEtcdClientTls.path + "/tls.key");
  }
  if (const Value* peer = ValueAt(etcd, {"spec", "etcd", "peerUrlTls"}); peer != nullptr) {
    const std::string field = "spec.etcd.peerUrlTls";
    for (Status added : {add(*peer, field, "tlsCASecretRef", kEtcdPeerCa, {&etcd_mounts}),
                         add(*peer, field, "serverTLSSecretRef", kEtcdPeerServerTls, {&etcd_mounts})})
      if (!added.ok()) return added;
  }
  if (const Value* backup = ValueAt(etcd, {"spec", "backup", "tls"}); backup != nullptr) {
    const std::string field = "spec.backup.tls";
    for (Status added :
         {add(*backup, field, "tlsCASecretRef", kBackupRestoreCa, {&member_mounts}),
          add(*backup, field, "serverTLSSecretRef", kBackupRestoreServerTls, {&member_mounts})})
      if (!added.ok()) return added;
    agent_args.push_back(std::string("--server-cert=") + kBackupRestoreServerTls.path + "/tls.crt");
    agent_args.push_back(std::string("--server-key=") + kBackupRestoreServerTls.path + "/tls.key");
    agent_args.push_back("--server-ca=" + TlsCaFile(*backup, kBackupRestoreCa));
    // With a client Secret, snapshots are asked for with a client certificate of the same CA, as
    // etcd-druid's compaction asks for them (curl --cert <client>/tls.crt): the agents ask for one, and
    // present the client Secret when they forward to the leader's.
    if (ValueAt(*backup, {"clientTLSSecretRef"}) != nullptr) {
      if (Status added = add(*backup, field, "clientTLSSecretRef", kBackupRestoreClientTls, {&member_mounts});
          !added.ok())
        return added;
      agent_args.push_back("--server-client-ca=" + TlsCaFile(*backup, kBackupRestoreCa));
      agent_args.push_back(std::string("--server-client-cert=") + kBackupRestoreClientTls.path + "/tls.crt");
      agent_args.push_back(std::string("--server-client-key=") + kBackupRestoreClientTls.path + "/tls.key");
    }
  }
  return {};
}

}  // namespace

Value EtcdPodSelector(const Value& etcd) {
  auto selector = ToValue(Json{{"matchLabels", SelectorLabels(FieldText(etcd, {"metadata", "name"}))}});
  return selector.ok() ? *selector : Value::Null();
}

int64_t RenderedGeneration(const Value& statefulset) {
  const std::string text = FieldText(statefulset, {"metadata", "annotations", kRenderedGenerationAnnotation});
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::stoll(text);
}

Result<Value> EtcdStatefulSet(const Value& etcd, int64_t replicas,
                              const std::vector<std::string>& member_init_rules) {
  const std::string name = FieldText(etcd, {"metadata", "name"});
  if (FieldText(etcd, {"metadata", "uid"}).size() < 6) return Missing(etcd, "metadata.uid", "is not set");
  const int64_t client_port = FieldInt(etcd, {"spec", "etcd", "clientPort"}, 2379);
  const int64_t peer_port = FieldInt(etcd, {"spec", "etcd", "serverPort"}, 2380);
  const std::string client_url = MemberUrl(etcd, "clientUrlTls", client_port);
  const std::string peer_url = MemberUrl(etcd, "peerUrlTls", peer_port);
  const std::string storage = FieldText(etcd, {"spec", "storageCapacity"}, "16Gi");
  const std::string claim = FieldText(etcd, {"spec", "volumeClaimTemplate"}, name);

  Json env = {
      {{"name", "POD_NAME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}},
      {{"name", "POD_NAMESPACE"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.namespace"}}}}}}};
  Json mounts = {{{"name", claim}, {"mountPath", "/var/etcd/data"}},
                 {{"name", "etcd-config"}, {"mountPath", "/var/etcd/config"}}};
  Json volumes = {{{"name", "etcd-config"},
                   {"configMap",
                    {{"name", EtcdConfigMapName(etcd)},
                     {"items", Json::array({{{"key", "etcd.conf.yaml"}, {"path", "etcd.conf.yaml"}}})}}}}};
  Json init_args = {"member-init", "--etcd-name=" + name, "--name=$(POD_NAME)",
                    "--namespace=$(POD_NAMESPACE)", "--peer-url=" + peer_url, "--client-url=" + client_url,
                    "--data-dir=/var/etcd/data/new.etcd", "--config-template=/var/etcd/config/etcd.conf.yaml",
                    "--config-out=/var/etcd/data/etcd.conf.yaml",
                    // While the first member restores, the others wait in member-init rather than
                    // in the kubelet's restart back-off, which grows to 5 minutes.
                    "--wait-for-cluster=120"};
  for (const std::string& reference : member_init_rules) init_args.push_back("--rules=" + reference);
  const int64_t backup_port = FieldInt(etcd, {"spec", "backup", "port"}, 8080);
  Json agent_args = {"member-agent", "--etcd=" + name, "--name=$(POD_NAME)", "--namespace=$(POD_NAMESPACE)",
                     "--client-url=" + client_url, "--peer-url=" + peer_url, "--endpoints=" + client_url,
                     // etcd-backup-restore's HTTP API, where etcd-druid asks for snapshots; on
                     // every address of the Pod, said explicitly so that a test kubelet running
                     // Pods as host processes can bind it to the Pod's own address.
                     "--server-port=" + std::to_string(backup_port), "--server-host=0.0.0.0"};
  auto store_access = BackupStoreAccess(etcd);
  if (!store_access.ok()) return store_access.error();
  for (const Json& volume : store_access->volumes) volumes.push_back(volume);
  for (const Json& mount : store_access->mounts) mounts.push_back(mount);
  for (const Json& variable : store_access->env) env.push_back(variable);
  const std::vector<std::string>& store_args = store_access->args;
  if (!store_args.empty()) {
    for (const std::string& arg : store_args) {
      init_args.push_back(arg);
      agent_args.push_back(arg);
    }
    if (Status added = AddSnapshotArgs(etcd, agent_args); !added.ok()) return added.error();
  }
  Json etcd_mounts = Json::array({mounts[0]});
  Json tls_args = Json::array();
  if (Status added = AddTlsSecrets(etcd, volumes, etcd_mounts, mounts, tls_args, agent_args); !added.ok())
    return added.error();
  for (const Json& arg : tls_args) {
    init_args.push_back(arg);
    agent_args.push_back(arg);
  }
  // The etcd container gets no ServiceAccount token: it calls no API server, and with the token anything that
  // runs in it could act as the members (patch their Leases, whose revisions make the data-loss bound an
  // approver reads). A mount at the token's path keeps the ServiceAccount admission plugin from adding one
  // (kube-apiserver 1.20, plugin/pkg/admission/serviceaccount/admission.go); member-init and the agent keep
  // it.
  volumes.push_back({{"name", "no-service-account-token"}, {"emptyDir", Json::object()}});
  etcd_mounts.push_back({{"name", "no-service-account-token"},
                         {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"},
                         {"readOnly", true}});
  // Plain HTTP: /health on the client URL; with client TLS, which asks for a
  // client certificate the kubelet does not have, /health on the metrics
  // listener the ConfigMap adds for it (kEtcdMetricsPort). etcd-druid
  // probes etcd-wrapper's /readyz instead, which ruleplane does not run.
  const bool client_tls = Scheme(etcd, "clientUrlTls") == "https";
  const Json readiness = {
      {"httpGet",
       {{"path", "/health"}, {"port", client_tls ? kEtcdMetricsPort : client_port}, {"scheme", "HTTP"}}},
      {"periodSeconds", 5}};

  const Json pod_spec = {
      {"serviceAccountName", MemberServiceAccountName(etcd)},
      {"terminationGracePeriodSeconds", 30},
      {"initContainers", Json::array({{{"name", "member-init"},
                                       {"image", kMemberImage},
                                       {"imagePullPolicy", "IfNotPresent"},
                                       {"command", Json::array({"ruleplane"})},
                                       {"args", init_args},
                                       {"env", env},
                                       {"volumeMounts", mounts}}})},
      {"containers",
       Json::array({{{"name", "etcd"},
                     {"image", kMemberImage},
                     {"imagePullPolicy", "IfNotPresent"},
                     {"command", Json::array({"etcd", "--config-file=/var/etcd/data/etcd.conf.yaml"})},
                     {"ports", Json::array({{{"name", "client"}, {"containerPort", client_port}},
                                            {{"name", "peer"}, {"containerPort", peer_port}}})},
                     {"readinessProbe", readiness},
                     {"volumeMounts", etcd_mounts}},
                    {{"name", "member-agent"},
                     {"image", kMemberImage},
                     {"imagePullPolicy", "IfNotPresent"},
                     {"command", Json::array({"ruleplane"})},
                     {"args", agent_args},
                     // etcd-druid's name for the backup-restore container's port.
                     {"ports", Json::array({{{"name", "server"}, {"containerPort", backup_port}}})},
                     {"env", env},
                     {"volumeMounts", mounts}}})},
      {"volumes", volumes}};
  auto pod_template = ToValue(Json{{"metadata", {{"labels", SelectorLabels(name)}}}, {"spec", pod_spec}});
  if (!pod_template.ok()) return pod_template.error();
  // The init container runs the member-agent's image (both are ruleplane).
  Json rendered = ToJson(PodTemplateForSpec(etcd, *pod_template));
  rendered["spec"]["initContainers"][0]["image"] = rendered["spec"]["containers"][1]["image"];
  // The members start again when their configuration changes (etcd-druid's
  // checksum/etcd-configmap). Rendered for one member: a new size alone
  // (initial-cluster, which a started member ignores) rolls none of them.
  auto config = EtcdConfigMap(etcd, 1);
  if (!config.ok()) return config.error();
  rendered["metadata"]["annotations"][kConfigChecksumAnnotation] =
      Sha256Hex(ToJson(*ValueAt(*config, {"data"})).dump());
  Json metadata = ObjectMeta(etcd, name);
  metadata["annotations"] = {
      {kRenderedGenerationAnnotation, std::to_string(FieldInt(etcd, {"metadata", "generation"}, 0))}};
  Json claim_spec = {{"accessModes", Json::array({"ReadWriteOnce"})},
                     {"resources", {{"requests", {{"storage", storage}}}}}};
  if (const std::string storage_class = FieldText(etcd, {"spec", "storageClass"}); !storage_class.empty())
    claim_spec["storageClassName"] = storage_class;
  return ToValue(Json{
      {"apiVersion", "apps/v1"},
      {"kind", "StatefulSet"},
      {"metadata", metadata},
      {"spec",
       {{"replicas", replicas},
        {"serviceName", name + "-peer"},
        {"podManagementPolicy", "Parallel"},
        {"updateStrategy", {{"type", "RollingUpdate"}}},
        {"selector", ToJson(EtcdPodSelector(etcd))},
        {"template", rendered},
        {"volumeClaimTemplates", Json::array({{{"metadata", {{"name", claim}}}, {"spec", claim_spec}}})}}}});
}

}  // namespace ruleplane
