// What the templates (etcd_templates.h) share: nlohmann JSON to build an
// object and the Value it is returned as, the labels, owner reference and
// metadata every object of an Etcd carries, the names of storage providers.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/error.h"
#include "engine/common/value.h"

namespace ruleplane {

using Json = nlohmann::ordered_json;

Json ToJson(const Value& value);
Result<Value> ToValue(const Json& json);

// kFailedPrecondition: "Etcd <name>: <field> <why>".
Error Missing(const Value& etcd, const std::string& field, const std::string& why);

// The Etcd as the controlling owner (blockOwnerDeletion too).
Json OwnerReference(const Value& etcd);

// The Etcd as the controlling owner, without blockOwnerDeletion (the Leases
// and the budget), as a Value.
Value ControllerReference(const Value& etcd);

// {"name": "etcd", "instance": <etcd>}: the member pods' labels.
Json SelectorLabels(const std::string& name);

// name, namespace, SelectorLabels and OwnerReference.
Json ObjectMeta(const Value& etcd, const std::string& object_name);

// etcd-druid's storage provider name for backup-restore
// (StorageProviderFromInfraProvider): "aws" and "S3" are "S3", ...; "" for "".
Result<std::string> StorageProvider(const std::string& provider);

// The backup store, as etcd-druid passes it to etcd-backup-restore, for the
// member containers and the compaction Job: Local is a host directory per
// container; an object store gets spec.backup.store.secretRef mounted at
// /var/etcd-backup, named by the provider's credentials variable, and the
// container in STORAGE_CONTAINER (internal/component/statefulset/builder.go,
// internal/store/store.go GetProviderEnvVars); the store flags of
// cli/store_flags.h. Providers ruleplane does not write to: no args (no backups).
struct StoreAccess {
  Json volumes = Json::array();
  Json mounts = Json::array();
  Json env = Json::array();
  std::vector<std::string> args;
};
Result<StoreAccess> BackupStoreAccess(const Value& etcd);

// "<scheme>" of the client or peer URLs: https when that side has TLS.
std::string Scheme(const Value& etcd, std::string_view tls_field);

// etcd's metrics listener (listen-metrics-urls, plain HTTP), which the
// ConfigMap adds when the client side has TLS: the readiness probe's /health.
inline constexpr int64_t kEtcdMetricsPort = 2381;

// A TLS Secret's volume in the member pods and where it is mounted: etcd-druid's
// names and paths (internal/common/constants.go, VolumeNameEtcd* and
// VolumeMountPathEtcd*). The TLS Secrets are kubernetes.io/tls (tls.crt,
// tls.key); a CA Secret's certificate is its tlsCASecretRef.dataKey.
struct TlsSecretMount {
  const char* volume;
  const char* path;
};
// spec.etcd.clientUrlTls: tlsCASecretRef, serverTLSSecretRef (etcd's client
// listener) and clientTLSSecretRef (what member-init and member-agent present).
inline constexpr TlsSecretMount kEtcdCa{"etcd-ca", "/var/etcd/ssl/ca"};
inline constexpr TlsSecretMount kEtcdServerTls{"etcd-server-tls", "/var/etcd/ssl/server"};
inline constexpr TlsSecretMount kEtcdClientTls{"etcd-client-tls", "/var/etcd/ssl/client"};
// spec.etcd.peerUrlTls: tlsCASecretRef and serverTLSSecretRef.
inline constexpr TlsSecretMount kEtcdPeerCa{"etcd-peer-ca", "/var/etcd/ssl/peer/ca"};
inline constexpr TlsSecretMount kEtcdPeerServerTls{"etcd-peer-server-tls", "/var/etcd/ssl/peer/server"};
// spec.backup.tls: tlsCASecretRef and serverTLSSecretRef (the member agent's
// HTTPS API; VolumeNameBackupRestore*, VolumeMountPathBackupRestore*), and
// clientTLSSecretRef (what a client of that API presents: here the agents
// forwarding to the leader's).
inline constexpr TlsSecretMount kBackupRestoreCa{"backup-restore-ca", "/var/etcdbr/ssl/ca"};
inline constexpr TlsSecretMount kBackupRestoreServerTls{"backup-restore-server-tls",
                                                        "/var/etcdbr/ssl/server"};
inline constexpr TlsSecretMount kBackupRestoreClientTls{"backup-restore-client-tls",
                                                        "/var/etcdbr/ssl/client"};

// The CA file of TLS settings (spec.etcd.clientUrlTls, spec.backup.tls, ...)
// under its mount: "<ca path>/<dataKey>", dataKey "ca.crt" unless set
// (etcd-druid's default).
std::string TlsCaFile(const Value& tls_settings, const TlsSecretMount& ca);

}  // namespace ruleplane
