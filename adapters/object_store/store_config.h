// StoreConfig: which backup store to open, as etcd-backup-restore's flags
// name it (--storage-provider, --store-container, --store-prefix,
// --store-endpoint-override, --snapstore-temp-directory) and with the
// credentials etcd-druid mounts from spec.backup.store.secretRef: a
// directory of one file per key ($AWS_APPLICATION_CREDENTIALS: accessKeyID,
// secretAccessKey, region, endpoint, s3ForcePathStyle, insecureSkipVerify,
// trustedCaCert, sseCustomerKey, sseCustomerAlgorithm) or a JSON file of
// the same keys ($AWS_APPLICATION_CREDENTIALS_JSON, or a *.json file in the
// directory, which then wins, as etcd-backup-restore reads it); for ABS the
// same forms with the keys storageAccount, storageKey and domain (what
// etcd-backup-restore reads from $AZURE_APPLICATION_CREDENTIALS[_JSON]).
//
//   StoreConfig config{.provider = "S3", .container = "backups", .prefix = "etcd-main",
//                      .credentials = "/var/etcd-backup"};
//   auto objects = OpenObjectStore(config);
//
// Providers: Local (the directory <container>/<prefix>), S3 (also
// S3-compatible stores through an endpoint override) and ABS (Azure Blob
// Storage; Azurite through an endpoint override). GCS, Swift, OSS, ECS and
// OCS are refused, naming the provider.
#pragma once

#include <memory>
#include <string>

#include "adapters/object_store/azure_blob_client.h"
#include "adapters/object_store/object_store.h"
#include "adapters/object_store/s3_client.h"

namespace ruleplane {

struct StoreConfig {
  std::string provider;           // "Local", "S3" or "ABS"
  std::string container;          // the bucket; for Local, the directory that holds the prefix
  std::string prefix;             // etcd-backup-restore's store prefix ("etcd-main")
  std::string endpoint_override;  // "http://minio.backup:9000"; wins over the credentials' endpoint
  std::string credentials;        // a directory of credential files, or a JSON file
  std::string scratch_directory = "/tmp";
};

// The S3 client's configuration from the credentials; kInvalidArgument
// naming the file and key that is missing or does not parse.
Result<S3Config> ReadS3Config(const StoreConfig& config);

// The Azure Blob client's configuration from the credentials
// (storageAccount, storageKey, optional domain) and the endpoint override;
// kInvalidArgument naming what is missing.
Result<AzureBlobConfig> ReadAbsConfig(const StoreConfig& config);

// The ObjectStore the configuration names; kInvalidArgument for an unknown
// or unsupported provider, or unusable credentials. An S3 or ABS store
// follows its credentials (reopening_object_store.h): rotated ones are
// used from the next operation on, without a restart.
Result<std::unique_ptr<ObjectStore>> OpenObjectStore(const StoreConfig& config);

// When the credentials at `path` (a directory or a file) last changed: the
// newest modification time of the files, seconds since the epoch, following
// the links a mounted Secret is made of; 0 when `path` is "".
// etcd-backup-restore takes a new full snapshot when it moves
// (GetSnapstoreSecretModifiedTime).
Result<int64_t> CredentialsModifiedTime(const std::string& path);

}  // namespace ruleplane
