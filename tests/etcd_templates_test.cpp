// The objects rendered from an Etcd for the template actions, against
// etcd-druid v0.22.7's rendering of the same Etcd (the maintenance example's,
// which has TLS on both sides, an S3 store and a quota of 8Gi).
#include "adapters/kubernetes/etcd_templates.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string_view>
#include <tuple>
#include <vector>

#include "adapters/kubernetes/manifests.h"
#include "adapters/kubernetes/object_fields.h"
#include "cli/output_format.h"
#include "engine/common/json_value.h"
#include "tests/support/source_paths.h"

namespace ruleplane {
namespace {

Value ExampleEtcd() {
  std::ifstream in(std::string(testing::SourceDir()) + "/examples/snapshots/maintenance-rolling-update.json");
  std::stringstream text;
  text << in.rdbuf();
  auto snapshot = ParseJson(text.str());
  EXPECT_TRUE(snapshot.ok());
  return snapshot.ok() ? *ValueAt(*snapshot, {"etcd"}) : Value::Null();
}

Value WithBackupImage(const Value& etcd, const std::string& image) {
  nlohmann::ordered_json json = nlohmann::ordered_json::parse(FormatJson(etcd));
  json["spec"]["backup"]["image"] = image;
  auto value = ParseJson(json.dump());
  EXPECT_TRUE(value.ok());
  return value.ok() ? *value : Value::Null();
}

// The Etcd with `edit` applied to its JSON.
template <typename Edit>
Value Edited(const Value& etcd, Edit edit) {
  nlohmann::ordered_json json = nlohmann::ordered_json::parse(FormatJson(etcd));
  edit(json);
  auto value = ParseJson(json.dump());
  EXPECT_TRUE(value.ok());
  return value.ok() ? *value : Value::Null();
}

nlohmann::json PodSpec(const Result<Value>& statefulset) {
  return nlohmann::json::parse(FormatJson(*statefulset))["spec"]["template"]["spec"];
}

const nlohmann::json& Container(const nlohmann::json& pod, const std::string& name) {
  for (const char* list : {"initContainers", "containers"})
    for (const nlohmann::json& container : pod[list])
      if (container["name"] == name) return container;
  ADD_FAILURE() << "no container " << name;
  static const nlohmann::json none = nlohmann::json::object();
  return none;
}

// "<secret name>/<key>" of the Secret file a container reads at `path`:
// through the container's volumeMount at the path's directory to the pod's
// secret volume (its items, when it lists them, else the key is the file
// name); "" when no mounted Secret holds that path.
std::string SecretFileAt(const nlohmann::json& pod, const nlohmann::json& container,
                         const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  const std::string dir = path.substr(0, slash), file = path.substr(slash + 1);
  for (const nlohmann::json& mount : container.value("volumeMounts", nlohmann::json::array())) {
    if (mount["mountPath"] != dir) continue;
    for (const nlohmann::json& volume : pod["volumes"]) {
      if (volume["name"] != mount["name"] || !volume.contains("secret")) continue;
      std::string key = volume["secret"].contains("items") ? "" : file;
      for (const nlohmann::json& item : volume["secret"].value("items", nlohmann::json::array()))
        if (item["path"] == file) key = item["key"];
      return key.empty() ? "" : volume["secret"]["secretName"].get<std::string>() + "/" + key;
    }
  }
  return "";
}

// "<name>/<key>" of the Secret spec.etcd.<side>.<ref> names, for a
// kubernetes.io/tls key (tls.crt, tls.key) or, for "ca", the CA's dataKey.
std::string SecretFileOf(const Value& etcd, const std::string& side, const std::string& ref,
                         const std::string& key) {
  const Value* name = ValueAt(etcd, {"spec", "etcd", side, ref, "name"});
  const Value* data_key = ValueAt(etcd, {"spec", "etcd", side, ref, "dataKey"});
  return (name != nullptr ? name->string_value() : "?") + "/" +
         (key != "ca"           ? key
          : data_key != nullptr ? data_key->string_value()
                                : "ca.crt");
}

TEST(EtcdTemplates, TheConfigMapListsOneTlsPeerUrlPerReplica) {
  const Value etcd = ExampleEtcd();
  auto config_map = EtcdConfigMap(etcd, 5);
  ASSERT_TRUE(config_map.ok()) << config_map.error().message;
  EXPECT_EQ(ValueAt(*config_map, {"metadata", "name"})->string_value(), "etcd-bootstrap-4d6c1f");
  EXPECT_EQ(ValueAt(*config_map, {"metadata", "ownerReferences"})->list_value().size(), 1u);
  const YAML::Node config = YAML::Load(ValueAt(*config_map, {"data", "etcd.conf.yaml"})->string_value());
  EXPECT_EQ(config["initial-cluster"].as<std::string>(),
            "etcd-main-0=https://etcd-main-0.etcd-main-peer.shoot--dev--demo.svc:2380,"
            "etcd-main-1=https://etcd-main-1.etcd-main-peer.shoot--dev--demo.svc:2380,"
            "etcd-main-2=https://etcd-main-2.etcd-main-peer.shoot--dev--demo.svc:2380,"
            "etcd-main-3=https://etcd-main-3.etcd-main-peer.shoot--dev--demo.svc:2380,"
            "etcd-main-4=https://etcd-main-4.etcd-main-peer.shoot--dev--demo.svc:2380");
  EXPECT_EQ(config["quota-backend-bytes"].as<int64_t>(), 8589934592);
  EXPECT_EQ(config["listen-client-urls"].as<std::string>(), "https://0.0.0.0:2379");
  EXPECT_EQ(config["advertise-client-urls"].as<std::string>(), "https@etcd-main-peer@shoot--dev--demo@2379");
  EXPECT_EQ(config["peer-transport-security"]["trusted-ca-file"].as<std::string>(),
            "/var/etcd/ssl/peer/ca/bundle.crt");
  EXPECT_EQ(config["auto-compaction-retention"].as<std::string>(), "30m");
  EXPECT_EQ(InitialClusterSize(*config_map), 5);
  EXPECT_EQ(InitialClusterSize(*EtcdConfigMap(etcd, 3)), 3);
  EXPECT_EQ(InitialClusterSize(Value::MakeMap({})), -1);
}

TEST(EtcdTemplates, TheCompactionJobRunsRuleplaneCompactOnTheStore) {
  const Value etcd = ExampleEtcd();
  auto job = CompactionJob(etcd);
  ASSERT_TRUE(job.ok()) << job.error().message;
  EXPECT_EQ(ValueAt(*job, {"metadata", "name"})->string_value(), "etcd-main-compactor");
  EXPECT_EQ(ValueAt(*job, {"spec", "backoffLimit"})->int_value(), 0);
  const Value& pod = *ValueAt(*job, {"spec", "template", "spec"});
  EXPECT_EQ(ValueAt(pod, {"serviceAccountName"})->string_value(), "etcd-main");
  const Value& container = ValueAt(pod, {"containers"})->list_value()[0];
  EXPECT_EQ(ValueAt(container, {"image"})->string_value(), kMemberImage);
  std::vector<std::string> args;
  for (const Value& arg : ValueAt(container, {"args"})->list_value()) args.push_back(arg.string_value());
  for (const std::string expected :
       {"compact", "--data-dir=/var/etcd/data/compaction", "--full-snapshot-lease=etcd-main-full-snap",
        "--storage-provider=S3", "--store-prefix=shoot--dev--demo--7f1c3e9a/etcd-main"}) {
    EXPECT_NE(std::find(args.begin(), args.end(), expected), args.end()) << expected;
  }
  EXPECT_EQ(ValueAt(pod, {"volumes"})->list_value().size(), 2u) << "workspace and secret";
  EXPECT_EQ(ValueAt(container, {"resources", "requests", "memory"})->string_value(), "3Gi");
  for (const std::string& arg : args) {
    EXPECT_FALSE(arg.starts_with("--cluster-id") || arg.starts_with("--max-revision"))
        << "no member answered";
  }

  // The cluster a member answered for, and its revision: only its history, up to there, is compacted.
  auto of_cluster = CompactionJob(etcd, {"8e9e05c52164694d", 4242});
  ASSERT_TRUE(of_cluster.ok()) << of_cluster.error().message;
  const Value::List& of_cluster_args =
      ValueAt(ValueAt(*of_cluster, {"spec", "template", "spec", "containers"})->list_value()[0], {"args"})
          ->list_value();
  for (const char* expected : {"--cluster-id=8e9e05c52164694d", "--max-revision=4242"}) {
    EXPECT_NE(std::find(of_cluster_args.begin(), of_cluster_args.end(), Value::String(expected)),
              of_cluster_args.end())
        << expected;
  }

  auto sized = CompactionJob(Edited(etcd, [](auto& json) {
    json["spec"]["backup"]["snapshotCompaction"]["resources"]["requests"]["memory"] = "256Mi";
  }));
  ASSERT_TRUE(sized.ok()) << sized.error().message;
  const Value& sized_container = ValueAt(*sized, {"spec", "template", "spec", "containers"})->list_value()[0];
  EXPECT_EQ(ValueAt(sized_container, {"resources", "requests", "memory"})->string_value(), "256Mi");

  auto refused =
      CompactionJob(Edited(etcd, [](auto& json) { json["spec"]["backup"]["store"]["provider"] = "gcp"; }));
  ASSERT_FALSE(refused.ok()) << "ruleplane reads no GCS store";
  EXPECT_NE(refused.error().message.find("spec.backup.store.provider"), std::string::npos)
      << refused.error().message;
}

TEST(EtcdTemplates, ThePodTemplateTakesImagesResourcesAndLabelsFromTheSpec) {
  const Value etcd = ExampleEtcd();
  auto pod_template = ParseJson(R"({"metadata":{"labels":{"keep":"me"}},
    "spec":{"containers":[{"name":"etcd","image":"old-etcd"},{"name":"member-agent","image":"old-agent"},
                          {"name":"other","image":"untouched"}]}})");
  ASSERT_TRUE(pod_template.ok());
  const Value updated = PodTemplateForSpec(WithBackupImage(etcd, "new-agent"), *pod_template);
  const Value::List& containers = ValueAt(updated, {"spec", "containers"})->list_value();
  EXPECT_EQ(ValueAt(containers[0], {"image"})->string_value(), "old-etcd") << "spec.etcd.image is not set";
  EXPECT_EQ(ValueAt(containers[0], {"resources", "requests", "memory"})->string_value(), "1536Mi");
  EXPECT_EQ(ValueAt(containers[1], {"image"})->string_value(), "new-agent");
  EXPECT_EQ(ValueAt(containers[2], {"image"})->string_value(), "untouched");
  EXPECT_EQ(ValueAt(updated, {"metadata", "labels", "keep"})->string_value(), "me");
  EXPECT_EQ(ValueAt(updated, {"metadata", "labels", "role"})->string_value(), "main");
  EXPECT_EQ(ValueAt(updated, {"spec", "priorityClassName"})->string_value(), "gardener-system-500");
}

// spec.schedulingConstraints and spec.priorityClassName follow the spec,
// also when it takes them out (etcd-druid's builder.go).
TEST(EtcdTemplates, SchedulingConstraintsAndThePriorityClassFollowTheSpecAlsoWhenRemoved) {
  const Value etcd = Edited(ExampleEtcd(), [](auto& json) {
    json["spec"]["schedulingConstraints"] = {
        {"affinity",
         {{"podAntiAffinity",
           {{"requiredDuringSchedulingIgnoredDuringExecution", nlohmann::ordered_json::array()}}}}},
        {"topologySpreadConstraints",
         nlohmann::ordered_json::array({{{"maxSkew", 1}, {"topologyKey", "topology.kubernetes.io/zone"}}})}};
  });
  auto pod_template = ParseJson(R"({"spec":{"containers":[{"name":"etcd"}]}})");
  ASSERT_TRUE(pod_template.ok());
  const Value constrained = PodTemplateForSpec(etcd, *pod_template);
  ASSERT_NE(ValueAt(constrained, {"spec", "affinity", "podAntiAffinity"}), nullptr);
  EXPECT_EQ(ValueAt(constrained, {"spec", "topologySpreadConstraints"})
                ->list_value()[0]
                .Find("topologyKey")
                ->string_value(),
            "topology.kubernetes.io/zone");

  const Value unconstrained = PodTemplateForSpec(Edited(etcd,
                                                        [](auto& json) {
                                                          json["spec"].erase("schedulingConstraints");
                                                          json["spec"].erase("priorityClassName");
                                                        }),
                                                 constrained);
  for (const char* field : kSpecOwnedPodFields)
    EXPECT_EQ(ValueAt(unconstrained, {"spec", field}), nullptr)
        << field << " stays after the spec dropped it";
  EXPECT_NE(ValueAt(unconstrained, {"spec", "containers"}), nullptr);
}

// The pod template names the checksum of the configuration: a changed
// quota rolls the members, a new size alone does not.
TEST(EtcdTemplates, TheConfigurationChecksumChangesWithTheConfigurationNotWithTheSize) {
  const Value etcd = ExampleEtcd();
  auto checksum = [](const Value& of, int64_t replicas) {
    auto statefulset = EtcdStatefulSet(of, replicas);
    EXPECT_TRUE(statefulset.ok()) << statefulset.error().message;
    return statefulset.ok() ? FieldText(*statefulset, {"spec", "template", "metadata", "annotations",
                                                       kConfigChecksumAnnotation})
                            : "";
  };
  const std::string three = checksum(etcd, 3);
  EXPECT_EQ(three.size(), 64u) << three;
  EXPECT_EQ(checksum(etcd, 5), three);
  const Value bigger_quota = Edited(etcd, [](auto& json) { json["spec"]["etcd"]["quota"] = "12Gi"; });
  EXPECT_NE(checksum(bigger_quota, 3), three);
}

TEST(EtcdTemplates, TheVolumeClaimNamesTheStorageClassOnlyWhenTheSpecDoes) {
  auto claim_spec = [](const Value& etcd) {
    auto statefulset = EtcdStatefulSet(etcd, 3);
    EXPECT_TRUE(statefulset.ok()) << statefulset.error().message;
    return statefulset.ok()
               ? *ValueAt(*statefulset, {"spec", "volumeClaimTemplates"})->list_value()[0].Find("spec")
               : Value::Null();
  };
  EXPECT_EQ(ValueAt(claim_spec(Edited(ExampleEtcd(), [](auto& json) { json["spec"].erase("storageClass"); })),
                    {"storageClassName"}),
            nullptr);
  const Value fast =
      claim_spec(Edited(ExampleEtcd(), [](auto& json) { json["spec"]["storageClass"] = "fast"; }));
  EXPECT_EQ(FieldText(fast, {"storageClassName"}), "fast");
}

// deploy/network-policy.yaml selects the member Pods the StatefulSet
// renders, names ports their containers have, and admits the Pods
// deploy/controller.yaml runs: a label or port renamed on one side only
// would shut the controller out or let everyone in.
TEST(EtcdTemplates, TheShippedNetworkPolicyFitsTheRenderedPodsAndTheController) {
  auto policies = LoadManifests(std::string(testing::SourceDir()) + "/deploy/network-policy.yaml");
  ASSERT_TRUE(policies.ok()) << policies.error().message;
  ASSERT_EQ(policies->size(), 1u);
  const nlohmann::json policy = nlohmann::json::parse(FormatJson((*policies)[0]));
  auto controllers = LoadManifests(std::string(testing::SourceDir()) + "/deploy/controller.yaml");
  ASSERT_TRUE(controllers.ok()) << controllers.error().message;
  nlohmann::json controller_labels;
  for (const Value& manifest : *controllers) {
    if (FieldText(manifest, {"kind"}) == "Deployment")
      controller_labels =
          nlohmann::json::parse(FormatJson(*ValueAt(manifest, {"spec", "template", "metadata", "labels"})));
  }
  ASSERT_FALSE(controller_labels.is_null());
  auto statefulset = EtcdStatefulSet(ExampleEtcd(), 3);
  ASSERT_TRUE(statefulset.ok()) << statefulset.error().message;
  const nlohmann::json pod = nlohmann::json::parse(FormatJson(*statefulset))["spec"]["template"];
  std::set<std::string> port_names;
  for (const auto& container : pod["spec"]["containers"])
    for (const auto& port : container.value("ports", nlohmann::json::array()))
      port_names.insert(port["name"]);
  auto selects = [](const nlohmann::json& selector, const nlohmann::json& labels) {
    for (const auto& [key, value] : selector["matchLabels"].items())
      if (!labels.contains(key) || labels[key] != value) return false;
    return !selector["matchLabels"].empty();
  };

  EXPECT_TRUE(selects(policy["spec"]["podSelector"], pod["metadata"]["labels"])) << pod["metadata"]["labels"];
  EXPECT_EQ(policy["spec"]["policyTypes"], nlohmann::json::array({"Ingress"}));
  std::map<std::string, std::vector<nlohmann::json>> from_by_port;
  for (const auto& rule : policy["spec"]["ingress"]) {
    for (const auto& port : rule["ports"]) {
      EXPECT_TRUE(port_names.contains(port["port"])) << port["port"] << " is no container port's name";
      from_by_port[port["port"]] = rule.contains("from") ? rule["from"].get<std::vector<nlohmann::json>>()
                                                         : std::vector<nlohmann::json>{};
    }
  }
  EXPECT_TRUE(from_by_port.contains("client") && from_by_port["client"].empty())
      << "etcd's clients stay open";
  auto admitted = [&](const std::string& port, const nlohmann::json& labels) {
    return std::any_of(from_by_port[port].begin(), from_by_port[port].end(),
                       [&](const nlohmann::json& peer) { return selects(peer["podSelector"], labels); });
  };
  EXPECT_TRUE(admitted("peer", pod["metadata"]["labels"]));
  EXPECT_FALSE(admitted("peer", controller_labels));
  EXPECT_TRUE(admitted("server", controller_labels));
  EXPECT_TRUE(admitted("server", pod["metadata"]["labels"]));
  EXPECT_FALSE(admitted("server", nlohmann::json{{"app", "a-stranger"}}));
}

TEST(EtcdTemplates, QuantitiesAreWholeBytes) {
  EXPECT_EQ(*QuantityBytes("8Gi"), 8589934592);
  EXPECT_EQ(*QuantityBytes("100M"), 100000000);
  EXPECT_EQ(*QuantityBytes("1024"), 1024);
  EXPECT_FALSE(QuantityBytes("1.5Gi").ok());
  EXPECT_FALSE(QuantityBytes("Gi").ok());
  EXPECT_FALSE(QuantityBytes("8Xi").ok());
}

TEST(EtcdTemplates, TheStatefulSetRunsMemberInitEtcdAndTheMemberAgent) {
  const Value etcd = ExampleEtcd();
  auto statefulset = EtcdStatefulSet(etcd, 3);
  ASSERT_TRUE(statefulset.ok()) << statefulset.error().message;
  const nlohmann::json sts = nlohmann::json::parse(FormatJson(*statefulset));
  const std::string name = sts["metadata"]["name"];
  EXPECT_EQ(name, ValueAt(etcd, {"metadata", "name"})->string_value());
  EXPECT_EQ(sts["spec"]["replicas"], 3);
  EXPECT_EQ(sts["spec"]["serviceName"], name + "-peer");
  EXPECT_EQ(sts["spec"]["podManagementPolicy"], "Parallel");
  EXPECT_EQ(sts["metadata"]["ownerReferences"][0]["kind"], "Etcd");
  // The selector selects the template's pods.
  for (const auto& [key, value] : sts["spec"]["selector"]["matchLabels"].items())
    EXPECT_EQ(sts["spec"]["template"]["metadata"]["labels"][key], value) << key;
  const nlohmann::json& pod = sts["spec"]["template"]["spec"];
  EXPECT_EQ(pod["serviceAccountName"], "etcd-main");
  ASSERT_EQ(pod["initContainers"].size(), 1u);
  const nlohmann::json& init = pod["initContainers"][0];
  EXPECT_EQ(init["command"][0], "ruleplane");
  EXPECT_EQ(init["args"][0], "member-init");
  EXPECT_NE(std::find(init["args"].begin(), init["args"].end(), "--etcd-name=" + name), init["args"].end());
  // TLS on the peer side: the peer URL is https, by the pod's name under the peer Service.
  const std::string peer_url = "--peer-url=https://$(POD_NAME)." + name + "-peer." +
                               ValueAt(etcd, {"metadata", "namespace"})->string_value() + ".svc:2380";
  EXPECT_NE(std::find(init["args"].begin(), init["args"].end(), peer_url), init["args"].end())
      << init["args"];
  ASSERT_EQ(pod["containers"].size(), 2u);
  EXPECT_EQ(pod["containers"][0]["name"], "etcd");
  EXPECT_EQ(pod["containers"][0]["command"][1], "--config-file=/var/etcd/data/etcd.conf.yaml");
  // Client TLS asks for client certificates: the probe gets /health from the metrics listener.
  EXPECT_EQ(pod["containers"][0]["readinessProbe"]["httpGet"]["scheme"], "HTTP");
  EXPECT_EQ(pod["containers"][0]["readinessProbe"]["httpGet"]["port"], 2381);
  EXPECT_EQ(pod["containers"][1]["name"], "member-agent");
  EXPECT_EQ(pod["containers"][1]["args"][0], "member-agent");
  // etcd-backup-restore's API where etcd-druid asks for it: --server-port and the port named "server".
  const std::string server_port =
      "--server-port=" + std::to_string(FieldInt(etcd, {"spec", "backup", "port"}, 8080));
  EXPECT_NE(std::find(pod["containers"][1]["args"].begin(), pod["containers"][1]["args"].end(), server_port),
            pod["containers"][1]["args"].end())
      << pod["containers"][1]["args"];
  EXPECT_EQ(pod["containers"][1]["ports"][0]["name"], "server");
  EXPECT_EQ(pod["containers"][1]["ports"][0]["containerPort"],
            FieldInt(etcd, {"spec", "backup", "port"}, 8080));
  // No image in the spec: the member image; the backup image, when given, for both ruleplane containers.
  EXPECT_EQ(pod["containers"][0]["image"], kMemberImage);
  auto with_image = EtcdStatefulSet(WithBackupImage(etcd, "registry.example/ruleplane:1"), 3);
  ASSERT_TRUE(with_image.ok());
  const nlohmann::json other = nlohmann::json::parse(FormatJson(*with_image))["spec"]["template"]["spec"];
  EXPECT_EQ(other["initContainers"][0]["image"], "registry.example/ruleplane:1");
  EXPECT_EQ(other["containers"][1]["image"], "registry.example/ruleplane:1");
  EXPECT_EQ(other["containers"][0]["image"], kMemberImage);
  EXPECT_EQ(pod["volumes"][0]["configMap"]["name"], EtcdConfigMapName(etcd));
  // An S3 store, as etcd-druid mounts it: the secretRef at /var/etcd-backup,
  // named by AWS_APPLICATION_CREDENTIALS, the bucket in STORAGE_CONTAINER, and
  // etcd-backup-restore's store flags for both ruleplane containers.
  EXPECT_EQ(pod["volumes"][1]["name"], "etcd-backup-secret");
  EXPECT_EQ(pod["volumes"][1]["secret"]["secretName"], "etcd-backup");
  for (const nlohmann::json& container : {init, pod["containers"][1]}) {
    const auto& args = container["args"];
    for (const char* arg : {"--storage-provider=S3", "--store-prefix=shoot--dev--demo--7f1c3e9a/etcd-main",
                            "--snapstore-temp-directory=/var/etcd/data/temp"})
      EXPECT_NE(std::find(args.begin(), args.end(), arg), args.end()) << arg << " in " << args;
    for (const auto& arg : args)
      EXPECT_EQ(arg.get<std::string>().rfind("--backup-store", 0), std::string::npos);
    const nlohmann::json mount = {
        {"name", "etcd-backup-secret"}, {"mountPath", "/var/etcd-backup"}, {"readOnly", true}};
    EXPECT_NE(std::find(container["volumeMounts"].begin(), container["volumeMounts"].end(), mount),
              container["volumeMounts"].end())
        << container["volumeMounts"];
    const nlohmann::json credentials = {{"name", "AWS_APPLICATION_CREDENTIALS"},
                                        {"value", "/var/etcd-backup"}};
    const nlohmann::json bucket = {{"name", "STORAGE_CONTAINER"}, {"value", "dev-backup-etcd"}};
    for (const nlohmann::json& variable : {credentials, bucket})
      EXPECT_NE(std::find(container["env"].begin(), container["env"].end(), variable), container["env"].end())
          << variable << " in " << container["env"];
  }
  EXPECT_EQ(sts["spec"]["volumeClaimTemplates"][0]["metadata"]["name"],
            pod["containers"][0]["volumeMounts"][0]["name"]);
}

// Every file etcd.conf.yaml names for TLS is a key of the Secret it stands
// for, mounted at that file's directory in the etcd container: derived from
// the two objects, so the test fails whenever the paths and the mounts part.
TEST(EtcdTemplates, TheTlsFilesOfTheConfigMapAreTheSecretsTheEtcdContainerMounts) {
  for (const std::string ca_key : {"", "bundle.crt"}) {
    // The example names bundle.crt; without a dataKey, etcd-druid's ca.crt.
    const Value etcd = Edited(ExampleEtcd(), [&](auto& json) {
      for (const char* side : {"clientUrlTls", "peerUrlTls"}) {
        if (ca_key.empty())
          json["spec"]["etcd"][side]["tlsCASecretRef"].erase("dataKey");
        else
          json["spec"]["etcd"][side]["tlsCASecretRef"]["dataKey"] = ca_key;
      }
    });
    auto config_map = EtcdConfigMap(etcd, 3);
    auto statefulset = EtcdStatefulSet(etcd, 3);
    ASSERT_TRUE(config_map.ok()) << config_map.error().message;
    ASSERT_TRUE(statefulset.ok()) << statefulset.error().message;
    const YAML::Node config = YAML::Load(ValueAt(*config_map, {"data", "etcd.conf.yaml"})->string_value());
    const nlohmann::json pod = PodSpec(statefulset);
    const nlohmann::json& container = Container(pod, "etcd");
    for (const auto& [section, side] : {std::pair{"client-transport-security", "clientUrlTls"},
                                        std::pair{"peer-transport-security", "peerUrlTls"}}) {
      ASSERT_TRUE(config[section].IsMap()) << section;
      EXPECT_TRUE(config[section]["client-cert-auth"].as<bool>()) << section;
      for (const auto& [file, ref, key] : {std::tuple{"cert-file", "serverTLSSecretRef", "tls.crt"},
                                           std::tuple{"key-file", "serverTLSSecretRef", "tls.key"},
                                           std::tuple{"trusted-ca-file", "tlsCASecretRef", "ca"}}) {
        const std::string path = config[section][file].as<std::string>();
        EXPECT_EQ(SecretFileAt(pod, container, path), SecretFileOf(etcd, side, ref, key))
            << section << "." << file << " = " << path << "; mounts " << container["volumeMounts"]
            << "; volumes " << pod["volumes"];
      }
    }
    // etcd-druid's mount paths (internal/common/constants.go).
    EXPECT_EQ(config["client-transport-security"]["cert-file"].as<std::string>(),
              "/var/etcd/ssl/server/tls.crt");
    EXPECT_EQ(config["client-transport-security"]["trusted-ca-file"].as<std::string>(),
              "/var/etcd/ssl/ca/" + std::string(ca_key.empty() ? "ca.crt" : ca_key));
    EXPECT_EQ(config["peer-transport-security"]["key-file"].as<std::string>(),
              "/var/etcd/ssl/peer/server/tls.key");
    // The readiness probe reads /health where etcd serves it without a client certificate.
    EXPECT_EQ(config["listen-metrics-urls"].as<std::string>(), "http://0.0.0.0:2381");
    const nlohmann::json& probe = container["readinessProbe"]["httpGet"];
    EXPECT_EQ("http://0.0.0.0:" + std::to_string(probe["port"].get<int>()),
              config["listen-metrics-urls"].as<std::string>());
    EXPECT_EQ(probe["scheme"], "HTTP");
    EXPECT_EQ(probe["path"], "/health");
    for (const nlohmann::json& volume : pod["volumes"])
      if (volume.contains("secret")) {
        EXPECT_EQ(volume["secret"]["defaultMode"], 0640) << volume;
      }
  }
}

// member-init and member-agent talk to etcd's client URLs, which ask for a
// client certificate: both pass --cacert, --cert and --key, each a file of the
// client CA or client Secret mounted into that container.
TEST(EtcdTemplates, MemberInitAndMemberAgentPresentTheMountedClientSecret) {
  const Value etcd = ExampleEtcd();
  auto statefulset = EtcdStatefulSet(etcd, 3);
  ASSERT_TRUE(statefulset.ok()) << statefulset.error().message;
  const nlohmann::json pod = PodSpec(statefulset);
  for (const std::string name : {"member-init", "member-agent"}) {
    const nlohmann::json& container = Container(pod, name);
    for (const auto& [flag, ref, key] : {std::tuple{"--cacert=", "tlsCASecretRef", "ca"},
                                         std::tuple{"--cert=", "clientTLSSecretRef", "tls.crt"},
                                         std::tuple{"--key=", "clientTLSSecretRef", "tls.key"}}) {
      std::vector<std::string> paths;
      for (const nlohmann::json& arg : container["args"])
        if (const std::string text = arg; text.rfind(flag, 0) == 0)
          paths.push_back(text.substr(std::string_view(flag).size()));
      ASSERT_EQ(paths.size(), 1u) << name << " " << flag << " in " << container["args"];
      EXPECT_EQ(SecretFileAt(pod, container, paths[0]), SecretFileOf(etcd, "clientUrlTls", ref, key))
          << name << " " << flag << paths[0] << "; mounts " << container["volumeMounts"];
    }
    // etcd-druid's client Secret path (internal/common/constants.go).
    EXPECT_NE(
        std::find(container["args"].begin(), container["args"].end(), "--cert=/var/etcd/ssl/client/tls.crt"),
        container["args"].end())
        << container["args"];
  }
  // The etcd container does not need the client Secret; member-init and
  // member-agent do not need the server and peer Secrets.
  for (const nlohmann::json& mount : Container(pod, "etcd")["volumeMounts"])
    EXPECT_NE(mount["name"], "etcd-client-tls");
  for (const std::string name : {"member-init", "member-agent"})
    for (const nlohmann::json& mount : Container(pod, name)["volumeMounts"])
      for (const char* other : {"etcd-server-tls", "etcd-peer-ca", "etcd-peer-server-tls"})
        EXPECT_NE(mount["name"], other) << name;
}

// The members' ServiceAccount may patch their Leases, whose revisions make
// the data-loss bound an approver reads. The etcd container calls no API
// server: before, the admission plugin mounted the token into it as into the
// others.
TEST(EtcdTemplates, OnlyMemberInitAndTheAgentGetTheServiceAccountToken) {
  const std::string token_path = "/var/run/secrets/kubernetes.io/serviceaccount";
  const nlohmann::json pod = PodSpec(EtcdStatefulSet(ExampleEtcd(), 3));
  // What the admission plugin skips a container for: any mount at the token's path.
  auto mount_at_token_path = [&](const std::string& name) -> const nlohmann::json* {
    for (const nlohmann::json& mount : Container(pod, name)["volumeMounts"])
      if (mount["mountPath"] == token_path) return &mount;
    return nullptr;
  };
  const nlohmann::json* hidden = mount_at_token_path("etcd");
  ASSERT_NE(hidden, nullptr) << Container(pod, "etcd")["volumeMounts"];
  EXPECT_EQ((*hidden)["readOnly"], true);
  int empty_dirs = 0;
  for (const nlohmann::json& volume : pod["volumes"]) {
    if (volume["name"] != (*hidden)["name"]) continue;
    EXPECT_EQ(volume["emptyDir"], nlohmann::json::object()) << volume;
    ++empty_dirs;
  }
  EXPECT_EQ(empty_dirs, 1) << pod["volumes"];
  EXPECT_EQ(pod.value("automountServiceAccountToken", true), true) << "member-init and the agent need it";
  for (const std::string name : {"member-init", "member-agent"})
    EXPECT_EQ(mount_at_token_path(name), nullptr) << name;
}

TEST(EtcdTemplates, APlaintextEtcdMountsNoTlsSecretAndProbesTheClientPort) {
  const Value etcd = Edited(ExampleEtcd(), [](auto& json) {
    json["spec"]["etcd"].erase("clientUrlTls");
    json["spec"]["etcd"].erase("peerUrlTls");
  });
  auto config_map = EtcdConfigMap(etcd, 3);
  auto statefulset = EtcdStatefulSet(etcd, 3);
  ASSERT_TRUE(config_map.ok()) << config_map.error().message;
  ASSERT_TRUE(statefulset.ok()) << statefulset.error().message;
  const YAML::Node config = YAML::Load(ValueAt(*config_map, {"data", "etcd.conf.yaml"})->string_value());
  for (const char* key : {"client-transport-security", "peer-transport-security", "listen-metrics-urls"})
    EXPECT_FALSE(config[key]) << key;
  EXPECT_EQ(config["listen-client-urls"].as<std::string>(), "http://0.0.0.0:2379");
  const nlohmann::json pod = PodSpec(statefulset);
  for (const nlohmann::json& volume : pod["volumes"])
    if (volume.contains("secret")) {
      EXPECT_EQ(volume["name"], "etcd-backup-secret") << volume;
    }
  for (const std::string name : {"member-init", "etcd", "member-agent"}) {
    const nlohmann::json& container = Container(pod, name);
    for (const nlohmann::json& mount : container["volumeMounts"])
      EXPECT_EQ(mount["mountPath"].get<std::string>().rfind("/var/etcd/ssl", 0), std::string::npos) << mount;
    for (const nlohmann::json& arg : container.value("args", nlohmann::json::array()))
      for (const char* flag : {"--cacert", "--cert", "--key"})
        EXPECT_EQ(arg.get<std::string>().rfind(flag, 0), std::string::npos) << name << ": " << arg;
  }
  const nlohmann::json& probe = Container(pod, "etcd")["readinessProbe"]["httpGet"];
  EXPECT_EQ(probe["port"], 2379);
  EXPECT_EQ(probe["scheme"], "HTTP");
}

// spec.backup.tls: member-agent serves etcd-backup-restore's API over HTTPS
// from the server Secret at etcd-druid's path, with etcd-backup-restore's
// flags, and verifies the leader's agent against the CA Secret; the Secrets
// are mounted where etcd-druid mounts them, and a Secret without a name is
// refused naming the field.
TEST(EtcdTemplates, ABackupTlsEtcdServesTheAgentsApiOverHttpsFromEtcdDruidsPaths) {
  const Value etcd = Edited(ExampleEtcd(), [](auto& json) {
    json["spec"]["backup"]["tls"] = {{"tlsCASecretRef", {{"name", "backup-ca"}, {"dataKey", "bundle.crt"}}},
                                     {"serverTLSSecretRef", {{"name", "backup-server"}}}};
  });
  auto statefulset = EtcdStatefulSet(etcd, 3);
  ASSERT_TRUE(statefulset.ok()) << statefulset.error().message;
  const nlohmann::json pod = PodSpec(statefulset);
  std::map<std::string, std::string> secret_of_volume;
  for (const nlohmann::json& volume : pod["volumes"])
    if (volume.contains("secret")) secret_of_volume[volume["name"]] = volume["secret"]["secretName"];
  EXPECT_EQ(secret_of_volume["backup-restore-ca"], "backup-ca");
  EXPECT_EQ(secret_of_volume["backup-restore-server-tls"], "backup-server");
  const nlohmann::json& agent = Container(pod, "member-agent");
  std::map<std::string, std::string> mounted_at;
  for (const nlohmann::json& mount : agent["volumeMounts"]) mounted_at[mount["name"]] = mount["mountPath"];
  EXPECT_EQ(mounted_at["backup-restore-ca"], "/var/etcdbr/ssl/ca");
  EXPECT_EQ(mounted_at["backup-restore-server-tls"], "/var/etcdbr/ssl/server");
  for (const char* arg :
       {"--server-cert=/var/etcdbr/ssl/server/tls.crt", "--server-key=/var/etcdbr/ssl/server/tls.key",
        "--server-ca=/var/etcdbr/ssl/ca/bundle.crt"}) {
    EXPECT_NE(std::find(agent["args"].begin(), agent["args"].end(), arg), agent["args"].end())
        << arg << " in " << agent["args"];
  }
  for (const nlohmann::json& arg : Container(pod, "member-init")["args"])
    EXPECT_EQ(arg.get<std::string>().rfind("--server-", 0), std::string::npos) << "member-init: " << arg;
  // Without a client Secret, no client certificate is asked for: nothing could present one.
  for (const nlohmann::json& arg : agent["args"])
    EXPECT_EQ(arg.get<std::string>().rfind("--server-client-", 0), std::string::npos) << arg;

  // With one (etcd-druid's spec.backup.tls.clientTLSSecretRef), snapshots need a client certificate of the
  // backup CA, and the agents present the client Secret when they forward to the leader's.
  auto with_client =
      EtcdStatefulSet(Edited(etcd,
                             [](auto& json) {
                               json["spec"]["backup"]["tls"]["clientTLSSecretRef"] = {{"name", "br-client"}};
                             }),
                      3);
  ASSERT_TRUE(with_client.ok()) << with_client.error().message;
  const nlohmann::json client_pod = PodSpec(with_client);
  bool client_volume = false;
  for (const nlohmann::json& volume : client_pod["volumes"])
    if (volume["name"] == "backup-restore-client-tls")
      client_volume = volume["secret"]["secretName"] == "br-client";
  EXPECT_TRUE(client_volume) << client_pod["volumes"];
  const nlohmann::json& client_agent = Container(client_pod, "member-agent");
  const nlohmann::json client_mount = {
      {"name", "backup-restore-client-tls"}, {"mountPath", "/var/etcdbr/ssl/client"}, {"readOnly", true}};
  EXPECT_NE(std::find(client_agent["volumeMounts"].begin(), client_agent["volumeMounts"].end(), client_mount),
            client_agent["volumeMounts"].end())
      << client_agent["volumeMounts"];
  for (const char* arg : {"--server-client-ca=/var/etcdbr/ssl/ca/bundle.crt",
                          "--server-client-cert=/var/etcdbr/ssl/client/tls.crt",
                          "--server-client-key=/var/etcdbr/ssl/client/tls.key"}) {
    EXPECT_NE(std::find(client_agent["args"].begin(), client_agent["args"].end(), arg),
              client_agent["args"].end())
        << arg << " in " << client_agent["args"];
  }

  for (const char* ref : {"tlsCASecretRef", "serverTLSSecretRef"}) {
    const Value unnamed = Edited(etcd, [&](auto& json) { json["spec"]["backup"]["tls"].erase(ref); });
    auto refused = EtcdStatefulSet(unnamed, 3);
    ASSERT_FALSE(refused.ok()) << ref;
    EXPECT_NE(refused.error().message.find("spec.backup.tls." + std::string(ref) + ".name is not set"),
              std::string::npos)
        << refused.error().message;
  }
}

TEST(EtcdTemplates, ATlsSecretWithoutANameIsRefusedNamingTheField) {
  for (const auto& [side, ref] :
       {std::pair{"clientUrlTls", "tlsCASecretRef"}, std::pair{"clientUrlTls", "serverTLSSecretRef"},
        std::pair{"clientUrlTls", "clientTLSSecretRef"}, std::pair{"peerUrlTls", "tlsCASecretRef"},
        std::pair{"peerUrlTls", "serverTLSSecretRef"}}) {
    const Value etcd = Edited(ExampleEtcd(), [&](auto& json) { json["spec"]["etcd"][side].erase(ref); });
    auto statefulset = EtcdStatefulSet(etcd, 3);
    ASSERT_FALSE(statefulset.ok()) << side << "." << ref;
    EXPECT_NE(
        statefulset.error().message.find("spec.etcd." + std::string(side) + "." + ref + ".name is not set"),
        std::string::npos)
        << statefulset.error().message;
  }
}

TEST(EtcdTemplates, ALocalBackupStoreIsAHostDirectoryBothMemberCommandsUse) {
  nlohmann::ordered_json json = nlohmann::ordered_json::parse(FormatJson(ExampleEtcd()));
  json["spec"]["backup"]["store"] = {{"provider", "Local"}, {"container", "bucket"}, {"prefix", "main"}};
  json["spec"]["backup"]["deltaSnapshotPeriod"] = "5s";
  auto etcd = ParseJson(json.dump());
  ASSERT_TRUE(etcd.ok());
  auto statefulset = EtcdStatefulSet(*etcd, 1);
  ASSERT_TRUE(statefulset.ok()) << statefulset.error().message;
  const nlohmann::json pod = nlohmann::json::parse(FormatJson(*statefulset))["spec"]["template"]["spec"];
  EXPECT_EQ(pod["volumes"][1]["hostPath"]["path"], "/etc/gardener/local-backupbuckets/bucket");
  for (const nlohmann::json& container : {pod["initContainers"][0], pod["containers"][1]}) {
    const auto& args = container["args"];
    EXPECT_NE(std::find(args.begin(), args.end(), "--backup-store=/var/etcd/backup/main"), args.end())
        << args;
  }
  const auto& agent = pod["containers"][1]["args"];
  // etcd-druid's flags and defaults: compressed with gzip, a 100Mi delta memory limit.
  for (const char* arg : {"--delta-snapshot-period=5s", "--delta-snapshot-memory-limit=104857600",
                          "--compress-snapshots=true", "--compression-policy=gzip"})
    EXPECT_NE(std::find(agent.begin(), agent.end(), arg), agent.end()) << arg << " in " << agent;
}

TEST(EtcdTemplates, TheBackupSettingsPassAsEtcdBackupRestoreTakesThemOrAreRefusedNamingTheField) {
  nlohmann::ordered_json json = nlohmann::ordered_json::parse(FormatJson(ExampleEtcd()));
  json["spec"]["backup"]["store"] = {{"provider", "Local"}, {"prefix", "main"}};
  json["spec"]["backup"]["deltaSnapshotPeriod"] = "1m30s";
  json["spec"]["backup"]["fullSnapshotSchedule"] = "*/30 * * * *";
  json["spec"]["backup"]["deltaSnapshotMemoryLimit"] = "1Mi";
  json["spec"]["backup"]["compression"] = {{"enabled", false}};
  auto args_of = [](const nlohmann::ordered_json& etcd_json) -> Result<nlohmann::json> {
    auto etcd = ParseJson(etcd_json.dump());
    if (!etcd.ok()) return etcd.error();
    auto statefulset = EtcdStatefulSet(*etcd, 1);
    if (!statefulset.ok()) return statefulset.error();
    return nlohmann::json::parse(
        FormatJson(*statefulset))["spec"]["template"]["spec"]["containers"][1]["args"];
  };
  auto args = args_of(json);
  ASSERT_TRUE(args.ok()) << args.error().message;
  // The example's Exponential policy and 12h period; no --max-backups with Exponential.
  for (const char* arg : {"--delta-snapshot-period=1m30s", "--schedule=*/30 * * * *",
                          "--delta-snapshot-memory-limit=1048576", "--compress-snapshots=false",
                          "--garbage-collection-policy=Exponential", "--garbage-collection-period=12h0m0s"})
    EXPECT_NE(std::find(args->begin(), args->end(), arg), args->end()) << arg << " in " << *args;
  auto has_flag = [](const nlohmann::json& list, const std::string& flag) {
    return std::any_of(list.begin(), list.end(),
                       [&](const std::string& arg) { return arg.rfind(flag + "=", 0) == 0; });
  };
  EXPECT_FALSE(has_flag(*args, "--max-backups")) << *args;
  EXPECT_FALSE(has_flag(*args, "--delta-snapshot-retention-period")) << *args;

  // Unset: etcd-druid's LimitBased with 7, and no period.
  json["spec"]["backup"].erase("garbageCollectionPolicy");
  json["spec"]["backup"].erase("garbageCollectionPeriod");
  args = args_of(json);
  ASSERT_TRUE(args.ok()) << args.error().message;
  for (const char* arg : {"--garbage-collection-policy=LimitBased", "--max-backups=7"})
    EXPECT_NE(std::find(args->begin(), args->end(), arg), args->end()) << arg << " in " << *args;
  EXPECT_FALSE(has_flag(*args, "--garbage-collection-period")) << *args;

  json["spec"]["backup"]["garbageCollectionPolicy"] = "LimitBased";
  json["spec"]["backup"]["maxBackupsLimitBasedGC"] = 3;
  json["spec"]["backup"]["garbageCollectionPeriod"] = "5m";
  json["spec"]["backup"]["deltaSnapshotRetentionPeriod"] = "1h30m";
  args = args_of(json);
  ASSERT_TRUE(args.ok()) << args.error().message;
  for (const char* arg : {"--garbage-collection-policy=LimitBased", "--max-backups=3",
                          "--garbage-collection-period=5m", "--delta-snapshot-retention-period=1h30m"})
    EXPECT_NE(std::find(args->begin(), args->end(), arg), args->end()) << arg << " in " << *args;

  json["spec"]["backup"]["deltaSnapshotPeriod"] = "20 seconds";
  auto refused = args_of(json);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("spec.backup.deltaSnapshotPeriod"), std::string::npos)
      << refused.error().message;
  json["spec"]["backup"]["deltaSnapshotPeriod"] = "20s";
  // Each refused naming its field; set right again before the next.
  const std::vector<std::pair<std::string, nlohmann::ordered_json>> bad = {
      {"garbageCollectionPolicy", "Weekly"},
      {"garbageCollectionPeriod", "1 minute"},
      {"deltaSnapshotRetentionPeriod", "-1h"},
      {"maxBackupsLimitBasedGC", 0},
      {"maxBackupsLimitBasedGC", "3"}};
  for (const auto& [field, value] : bad) {
    nlohmann::ordered_json wrong = json;
    wrong["spec"]["backup"]["garbageCollectionPolicy"] = "LimitBased";
    wrong["spec"]["backup"][field] = value;
    refused = args_of(wrong);
    ASSERT_FALSE(refused.ok()) << field << " " << value;
    EXPECT_NE(refused.error().message.find("spec.backup." + field), std::string::npos)
        << refused.error().message;
  }
  json["spec"]["backup"]["compression"] = {{"enabled", true}, {"policy", "lzw"}};
  refused = args_of(json);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("spec.backup.compression.policy"), std::string::npos)
      << refused.error().message;
}

TEST(EtcdTemplates, TheServicesAreAClientServiceAndAHeadlessPeerService) {
  const Value etcd = ExampleEtcd();
  auto services = EtcdServices(etcd);
  ASSERT_TRUE(services.ok()) << services.error().message;
  ASSERT_EQ(services->size(), 2u);
  const std::string name = ValueAt(etcd, {"metadata", "name"})->string_value();
  EXPECT_EQ(ValueAt((*services)[0], {"metadata", "name"})->string_value(), name + "-client");
  EXPECT_EQ(ValueAt((*services)[1], {"metadata", "name"})->string_value(), name + "-peer");
  EXPECT_EQ(ValueAt((*services)[1], {"spec", "clusterIP"})->string_value(), "None");
  EXPECT_TRUE(ValueAt((*services)[1], {"spec", "publishNotReadyAddresses"})->bool_value());
  EXPECT_EQ(ValueAt((*services)[1], {"spec", "ports"})->list_value()[0].Find("port")->int_value(), 2380);
  // etcd-druid's client Service also carries the sidecar's API, named backuprestore.
  const Value::List& client_ports = ValueAt((*services)[0], {"spec", "ports"})->list_value();
  ASSERT_EQ(client_ports.size(), 2u);
  EXPECT_EQ(client_ports[1].Find("name")->string_value(), "backuprestore");
  EXPECT_EQ(client_ports[1].Find("port")->int_value(), FieldInt(etcd, {"spec", "backup", "port"}, 8080));
}

// etcd-druid's names: the ServiceAccount <etcd>, the Role and RoleBinding
// druid.gardener.cloud:etcd:<etcd>, each controlled by the Etcd; the
// binding grants the Role to that ServiceAccount in the Etcd's namespace.
TEST(EtcdTemplates, TheMembersServiceAccountRoleAndBindingAreNamedAsEtcdDruidNamesThem) {
  const Value etcd = ExampleEtcd();
  auto access = EtcdMemberAccess(etcd);
  ASSERT_TRUE(access.ok()) << access.error().message;
  ASSERT_EQ(access->size(), 3u);
  std::vector<std::string> kinds_and_names;
  for (const Value& object : *access) {
    kinds_and_names.push_back(FieldText(object, {"kind"}) + " " + FieldText(object, {"metadata", "name"}));
    EXPECT_EQ(FieldText(ValueAt(object, {"metadata", "ownerReferences"})->list_value()[0], {"uid"}),
              FieldText(etcd, {"metadata", "uid"}));
  }
  EXPECT_EQ(kinds_and_names,
            (std::vector<std::string>{"ServiceAccount etcd-main", "Role druid.gardener.cloud:etcd:etcd-main",
                                      "RoleBinding druid.gardener.cloud:etcd:etcd-main"}));
  const Value& binding = (*access)[2];
  EXPECT_EQ(FieldText(binding, {"roleRef", "name"}), MemberRoleName(etcd));
  const Value& subject = ValueAt(binding, {"subjects"})->list_value()[0];
  EXPECT_EQ(FieldText(subject, {"name"}), MemberServiceAccountName(etcd));
  EXPECT_EQ(FieldText(subject, {"namespace"}), FieldText(etcd, {"metadata", "namespace"}));
  // No verb beyond what the members use: the controller may grant only what it holds itself.
  std::vector<std::string> grants;
  for (const Value& rule : ValueAt((*access)[1], {"rules"})->list_value()) {
    for (const Value& resource : ValueAt(rule, {"resources"})->list_value())
      for (const Value& verb : ValueAt(rule, {"verbs"})->list_value())
        grants.push_back(resource.string_value() + " " + verb.string_value());
  }
  EXPECT_EQ(grants, (std::vector<std::string>{"leases get", "leases patch", "etcds get", "etcds/status patch",
                                              "pods get"}));
  // Every rule names its objects: this Etcd's, each member's by ordinal.
  const std::string name = FieldText(etcd, {"metadata", "name"});
  std::map<std::string, std::vector<std::string>> names;
  for (const Value& rule : ValueAt((*access)[1], {"rules"})->list_value()) {
    const Value* listed = ValueAt(rule, {"resourceNames"});
    ASSERT_NE(listed, nullptr) << FormatJson(rule);
    for (const Value& object : listed->list_value())
      names[ValueAt(rule, {"resources"})->list_value()[0].string_value()].push_back(object.string_value());
  }
  EXPECT_EQ(names["etcds"], std::vector<std::string>{name});
  EXPECT_EQ(names["etcds/status"], std::vector<std::string>{name});
  ASSERT_EQ(names["leases"].size(), 2 + static_cast<size_t>(kMostEtcdMembers));
  EXPECT_EQ(names["leases"][0], name + "-full-snap");
  EXPECT_EQ(names["leases"][1], name + "-delta-snap");
  EXPECT_EQ(names["leases"].back(), name + "-15");
  EXPECT_EQ(names["pods"].front(), name + "-0");
  EXPECT_EQ(std::count(names["leases"].begin(), names["leases"].end(), "ruleplane-controller"), 0);
}

// spec.etcd.clientService's labels and annotations go on the client
// Service only, beside the selector labels (etcd-druid's clientservice.go).
TEST(EtcdTemplates, TheClientServiceCarriesTheSpecsLabelsAndAnnotations) {
  const Value etcd = Edited(ExampleEtcd(), [](auto& json) {
    json["spec"]["etcd"]["clientService"] = {
        {"labels", {{"networking.gardener.cloud/to-etcd", "allowed"}}},
        {"annotations",
         {{"networking.resources.gardener.cloud/from-all-scrape-targets-allowed-ports", "[]"}}}};
  });
  auto services = EtcdServices(etcd);
  ASSERT_TRUE(services.ok()) << services.error().message;
  const Value& client = (*services)[0];
  EXPECT_EQ(FieldText(client, {"metadata", "labels", "networking.gardener.cloud/to-etcd"}), "allowed");
  EXPECT_EQ(FieldText(client, {"metadata", "labels", "instance"}), FieldText(etcd, {"metadata", "name"}));
  EXPECT_EQ(FieldText(client, {"metadata", "annotations",
                               "networking.resources.gardener.cloud/from-all-scrape-targets-allowed-ports"}),
            "[]");
  EXPECT_EQ(ValueAt((*services)[1], {"metadata", "annotations"}), nullptr) << "the peer Service has none";
}

// examples/<golden> is what the controller creates for examples/etcd.yaml
// with `edit` applied (`note`, comment lines after the header, says how): a
// reader sees the member pod template without running anything.
// RULEPLANE_UPDATE_GOLDEN=1 writes it again.
template <typename Edit>
void ExpectGoldenStatefulSet(const std::string& golden, const std::string& note, Edit edit) {
  const std::string source = testing::SourceDir();
  auto example = LoadManifests(source + "/examples/etcd.yaml");
  ASSERT_TRUE(example.ok()) << example.error().message;
  const Value etcd = Edited(example->front(), [&](auto& json) {
    json["metadata"]["namespace"] = "default";
    json["metadata"]["uid"] = "0a1b2c3d-0000-4000-8000-000000000000";
    json["metadata"]["generation"] = 1;
    edit(json);
  });
  auto statefulset = EtcdStatefulSet(etcd, 3);
  ASSERT_TRUE(statefulset.ok()) << statefulset.error().message;
  const std::string text =
      "# The StatefulSet `ruleplane controller` creates for examples/etcd.yaml "
      "(rules/etcd-druid/components.yaml,\n"
      "# action CreateStatefulSet; adapters/kubernetes/etcd_templates.h): each member pod runs ruleplane\n"
      "# member-init as init container, etcd, and ruleplane member-agent beside it. Not applied by hand: "
      "written\n"
      "# by tests/etcd_templates_test.cpp (RULEPLANE_UPDATE_GOLDEN=1), so that it shows what the code "
      "renders.\n" +
      note + cli::FormatYaml(*statefulset);
  const std::string path = source + "/examples/" + golden;
  if (std::getenv("RULEPLANE_UPDATE_GOLDEN") != nullptr) std::ofstream(path) << text;
  std::ifstream in(path);
  std::stringstream deployed;
  deployed << in.rdbuf();
  EXPECT_EQ(deployed.str(), text) << "run with RULEPLANE_UPDATE_GOLDEN=1 to write it again";
}

TEST(EtcdTemplates, ExamplesShowTheStatefulSetTheControllerCreatesForTheExample) {
  ExpectGoldenStatefulSet("etcd-member-statefulset.yaml", "", [](auto&) {});
}

// The same with TLS on both sides: the Secrets (kubernetes.io/tls, the CAs'
// under ca.crt) are the user's to create; the pod mounts them where
// etcd-druid does.
TEST(EtcdTemplates, ExamplesShowTheStatefulSetTheControllerCreatesForTheExampleWithTls) {
  ExpectGoldenStatefulSet(
      "etcd-tls-member-statefulset.yaml",
      "# Here with TLS on both sides and on the member agent's API: spec.etcd.clientUrlTls, peerUrlTls\n"
      "# and spec.backup.tls name the Secrets of the volumes below (kubernetes.io/tls; the CAs'\n"
      "# certificate under ca.crt).\n",
      [](auto& json) {
        json["spec"]["backup"]["tls"] = {{"tlsCASecretRef", {{"name", "etcd-main-backup-ca"}}},
                                         {"serverTLSSecretRef", {{"name", "etcd-main-backup-server"}}},
                                         {"clientTLSSecretRef", {{"name", "etcd-main-backup-client"}}}};
        json["spec"]["etcd"]["clientUrlTls"] = {{"tlsCASecretRef", {{"name", "etcd-main-ca"}}},
                                                {"serverTLSSecretRef", {{"name", "etcd-main-server"}}},
                                                {"clientTLSSecretRef", {{"name", "etcd-main-client"}}}};
        json["spec"]["etcd"]["peerUrlTls"] = {{"tlsCASecretRef", {{"name", "etcd-main-peer-ca"}}},
                                              {"serverTLSSecretRef", {{"name", "etcd-main-peer-server"}}}};
      });
}

}  // namespace
}  // namespace ruleplane
