// The backup-store flags that `backup`, `member-init` and `member-agent`
// share, as etcd-backup-restore names them:
//
//   --backup-store DIR                 a Local store: the directory <container>/<prefix>
//   --storage-provider Local|S3|ABS    (GCS, Swift, OSS, ECS, OCS: refused by name)
//   --store-container NAME             the bucket ($STORAGE_CONTAINER when not given)
//   --store-prefix PREFIX              etcd-backup-restore's store prefix
//   --store-endpoint-override URL      an S3-compatible store (MinIO, ECS, OCS)
//   --store-credentials PATH           a directory of credential files or a JSON file
//                                      ($AWS_APPLICATION_CREDENTIALS_JSON, then
//                                      $AWS_APPLICATION_CREDENTIALS when not given;
//                                      $AZURE_APPLICATION_CREDENTIALS... for ABS)
//   --snapstore-temp-directory DIR     where a snapshot waits before its upload (/tmp)
#pragma once

#include <iosfwd>
#include <memory>
#include <vector>

#include "adapters/local/backup_store.h"
#include "adapters/object_store/store_config.h"
#include "cli/flags.h"

namespace ruleplane::cli {

extern const char* const kStoreFlagsUsage;

// Appends the store flags to a command's.
std::vector<FlagSpec> WithStoreFlags(std::vector<FlagSpec> specs);

// Whether the flags name a store (--backup-store or --storage-provider).
bool StoreGiven(const Flags& flags);

// The store the flags name; false, with the problem written to `err`, when
// they name an unusable one (nothing is contacted yet).
bool StoreConfigFromFlags(const Flags& flags, StoreConfig& config, std::ostream& err);

// The store, opened; an error names what is wrong.
Result<std::unique_ptr<BackupStore>> OpenBackupStore(const StoreConfig& config);

}  // namespace ruleplane::cli
