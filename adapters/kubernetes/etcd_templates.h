// The objects etcd-druid derives from an Etcd (druid.gardener.cloud/v1alpha1)
// for the catalogue's template actions, as etcd-druid v0.22.7 renders them:
//
//   EtcdConfigMap      etcd-bootstrap-<uid[:6]>, data etcd.conf.yaml
//                      (pkg/component/etcd/configmap/values_helper.go)
//   EtcdMemberAccess   the members' ServiceAccount <etcd>, Role and
//                      RoleBinding druid.gardener.cloud:etcd:<etcd>
//                      (internal/component/{serviceaccount,role,rolebinding})
//   EtcdServices       <etcd>-client and the headless <etcd>-peer
//                      (seeds/000:107: "a headless service (along with the
//                      statefulset)" gives each member a DNS name)
//   EtcdStatefulSet    <etcd>: the member pods, with ruleplane's member-init
//                      as init container and member-agent as sidecar
//   CompactionJob      <etcd>-compactor (controllers/compaction/reconciler.go)
//   EtcdLease          a member Lease or <etcd>-full-snap / <etcd>-delta-snap
//   EtcdPodDisruptionBudget
//                      <etcd>, the budget over the member pods
//   PodTemplateForSpec the StatefulSet's pod template with what the Etcd's
//                      spec owns applied: images, resources, labels,
//                      annotations, priority class
//
// One file per kind in templates/. Pure functions of the Etcd object as the
// API returned it: no I/O. An Etcd that lacks what a template needs (no uid,
// no backup store, no image for the compaction job) is kFailedPrecondition,
// naming the field.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "engine/common/error.h"
#include "engine/common/value.h"

namespace ruleplane {

std::string EtcdConfigMapName(const Value& etcd);

// The ConfigMap whose etcd.conf.yaml lists `replicas` members in
// initial-cluster ("<etcd>-<i>=<scheme>://<etcd>-<i>.<etcd>-peer.<ns>.svc:<port>").
Result<Value> EtcdConfigMap(const Value& etcd, int64_t replicas);

// The number of members the ConfigMap's etcd.conf.yaml lists in
// initial-cluster; -1 when it has none or cannot be read.
int64_t InitialClusterSize(const Value& config_map);

// A member Pod's DNS name through the headless peer Service:
// "<pod>.<etcd>-peer.<namespace>.svc".
std::string MemberDnsName(const Value& etcd, const std::string& pod);

// The client Service (<etcd>-client) and the headless peer Service
// (<etcd>-peer, not-ready addresses published so that members find each
// other before they are Ready), both selecting the member pods; the client
// Service with spec.etcd.clientService's labels and annotations, whose keys
// it records in kClientServiceKeysAnnotation.
Result<Value::List> EtcdServices(const Value& etcd);

// On the client Service: the keys of the labels and annotations it carries
// from spec.etcd.clientService, as JSON {"annotations":[...],"labels":[...]},
// so that a key the spec drops later is taken off (ApplyEtcdServices) while
// the labels and annotations others set stay.
inline constexpr const char* kClientServiceKeysAnnotation = "ruleplane.dev/client-service-keys";

// The most members an Etcd's cluster can have (etcd advises at most 7): the
// ordinals the members' Role names and member-init asks, bounded because
// spec.replicas is input. A member beyond them cannot renew its Lease.
inline constexpr int64_t kMostEtcdMembers = 16;

// The member Pods' and the compaction Job's ServiceAccount: <etcd>, as
// etcd-druid names it.
std::string MemberServiceAccountName(const Value& etcd);

// The Role and RoleBinding that grant it what the members do with the API:
// "druid.gardener.cloud:etcd:<etcd>", as etcd-druid names them.
std::string MemberRoleName(const Value& etcd);

// The ServiceAccount, Role and RoleBinding above, in that order, owned by the
// Etcd (api/core/v1alpha1/helper.go GetServiceAccountName, GetRoleName; the
// Role's rules are ruleplane's members' own, narrower than etcd-druid's).
Result<Value::List> EtcdMemberAccess(const Value& etcd);

// {"matchLabels": {"name": "etcd", "instance": <etcd>}}: what EtcdStatefulSet
// selects its pods by (and EtcdServices and the budget select them by).
Value EtcdPodSelector(const Value& etcd);

// The image of the member pods' containers when the Etcd names none (in
// spec.etcd.image, spec.backup.image): the ruleplane image, which holds etcd
// too, as scripts/build-images.sh names it (docs/running-the-controller.md, "The image"). Pulled only
// when the node does not have it.
inline constexpr const char* kMemberImage = "localhost/ruleplane:latest";

// On the StatefulSet: the Etcd's metadata.generation whose spec its pod
// template was rendered from (EtcdStatefulSet, ApplyStatefulSetSpec). A
// StatefulSet that exists already counts as created for a generation only
// when it names that generation.
inline constexpr const char* kRenderedGenerationAnnotation = "ruleplane.dev/etcd-generation";

// On the pod template: the SHA-256 of the etcd configuration the members
// start from (the ConfigMap's data as rendered for one member), so that a
// changed configuration rolls them.
inline constexpr const char* kConfigChecksumAnnotation = "checksum/etcd-configmap";

// The generation a StatefulSet names in kRenderedGenerationAnnotation; -1
// when it names none (rendered by an older ruleplane, or by someone else).
int64_t RenderedGeneration(const Value& statefulset);

// The StatefulSet <etcd> with `replicas` member pods (podManagementPolicy
// Parallel, as etcd-druid's). Each pod: init container `ruleplane
// member-init --etcd-name <etcd>` (decides how this member starts and writes
// its etcd configuration from the ConfigMap's), container "etcd" (etcd
// --config-file, readiness /health on the client port) and sidecar
// "member-agent" (renews the member Lease; with a Local backup store, takes
// the backups). Data on a volume claim per member (spec.storageClass,
// spec.storageCapacity); the ConfigMap mounted at
// /var/etcd/config; service account MemberServiceAccountName.
// PodTemplateForSpec is applied: images, resources, labels from the spec;
// the pod template carries the configuration's kConfigChecksumAnnotation.
// Annotated with the Etcd's generation (kRenderedGenerationAnnotation).
// `member_init_rules`: rule references ("etcd-backup-restore@2") member-init
// is given as --rules (the controller's own selection for its subject);
// none, its bundled defaults.
Result<Value> EtcdStatefulSet(const Value& etcd, int64_t replicas,
                              const std::vector<std::string>& member_init_rules = {});

std::string CompactionJobName(const Value& etcd);

// The history the compaction Job compacts: that of the etcd cluster a member
// answered for just now (`compact --cluster-id`, hex), up to the revision it
// answered with (`compact --max-revision`): another cluster's snapshots on the
// prefix, and strays beyond the cluster's revision, are neither compacted nor
// written to the full-snapshot Lease. "" and 0 when no member answered.
struct CompactionScope {
  std::string cluster_id;
  int64_t max_revision = 0;
};

// The batch/v1 Job that runs `ruleplane compact` over the Etcd's backup
// store (where etcd-druid runs etcd-backup-restore's `compact`), in the
// member image, as the members' service account (MemberServiceAccountName).
Result<Value> CompactionJob(const Value& etcd, const CompactionScope& scope = {});

// The Lease `name` owned by the Etcd, labelled app.kubernetes.io/part-of
// <etcd> and gardener.cloud/purpose `purpose` ("etcd-member-lease",
// "etcd-snapshot-lease").
Value EtcdLease(const Value& etcd, const std::string& name, const std::string& purpose);

// The PodDisruptionBudget <etcd> owned by the Etcd, with `min_available` and
// `selector` (the StatefulSet's), as `api_version` ("policy/v1" from
// Kubernetes 1.21 on, "policy/v1beta1" before; the spec is the same).
Value EtcdPodDisruptionBudget(const Value& etcd, const Value& min_available, const Value& selector,
                              const std::string& api_version);

// `pod_template` (a StatefulSet's spec.template) with the Etcd's spec
// applied: the "etcd" container's image and resources from spec.etcd, the
// backup sidecar's ("backup-restore" or "member-agent") from spec.backup,
// spec.labels and spec.annotations added to the pod's, and the pod spec
// fields the Etcd's spec owns (kSpecOwnedPodFields): spec.priorityClassName,
// spec.schedulingConstraints' affinity and topologySpreadConstraints, set
// from it or removed when it does not set them. Other fields the spec does
// not set are left as they are.
Value PodTemplateForSpec(const Value& etcd, const Value& pod_template);

// The pod spec fields that follow the Etcd's spec, also in their absence:
// a merge patch of the pod template names a removed one null.
inline constexpr std::array<const char*, 3> kSpecOwnedPodFields = {"priorityClassName", "affinity",
                                                                   "topologySpreadConstraints"};

// A Kubernetes quantity ("8Gi", "500M", "1024") in bytes; the error says why not.
Result<int64_t> QuantityBytes(const std::string& quantity);

}  // namespace ruleplane
