#include "cli/store_flags.h"

#include <cstdlib>
#include <filesystem>
#include <ostream>

namespace ruleplane::cli {
namespace {

std::string Environment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

}  // namespace

const char* const kStoreFlagsUsage =
    R"(The backup store (etcd-backup-restore's flags):
  --backup-store DIR               a Local store, the directory <container>/<prefix>
  --storage-provider Local|S3|ABS  with --store-container BUCKET (or $STORAGE_CONTAINER),
                                   --store-prefix PREFIX, --store-endpoint-override URL,
                                   --store-credentials PATH (a directory of files
                                   accessKeyID, secretAccessKey, region, ... or a JSON file;
                                   $AWS_APPLICATION_CREDENTIALS[_JSON], for ABS
                                   $AZURE_APPLICATION_CREDENTIALS[_JSON], when not given),
                                   --snapstore-temp-directory DIR (default /tmp)
)";

std::vector<FlagSpec> WithStoreFlags(std::vector<FlagSpec> specs) {
  for (const char* name : {"--backup-store", "--storage-provider", "--store-container", "--store-prefix",
                           "--store-endpoint-override", "--store-credentials", "--snapstore-temp-directory"})
    specs.push_back({name});
  return specs;
}

bool StoreGiven(const Flags& flags) { return flags.Has("--backup-store") || flags.Has("--storage-provider"); }

bool StoreConfigFromFlags(const Flags& flags, StoreConfig& config, std::ostream& err) {
  if (flags.Has("--backup-store") && flags.Has("--storage-provider")) {
    err << "ruleplane: --backup-store is a Local store: give it or --storage-provider, not both\n";
    return false;
  }
  if (flags.Has("--backup-store")) {
    const std::filesystem::path directory =
        std::filesystem::absolute(flags.Get("--backup-store")).lexically_normal();
    const std::filesystem::path trimmed = directory.has_filename() ? directory : directory.parent_path();
    config.provider = "Local";
    config.container = trimmed.parent_path().string();
    config.prefix = trimmed.filename().string();
    return true;
  }
  config.provider = flags.Get("--storage-provider");
  config.container = flags.Get("--store-container", Environment("STORAGE_CONTAINER"));
  config.prefix = flags.Get("--store-prefix");
  config.endpoint_override = flags.Get("--store-endpoint-override");
  config.credentials = flags.Get("--store-credentials");
  // What etcd-druid sets for each provider (a JSON file wins over a directory).
  const std::string variable =
      config.provider == "ABS" ? "AZURE_APPLICATION_CREDENTIALS" : "AWS_APPLICATION_CREDENTIALS";
  if (config.credentials.empty()) config.credentials = Environment((variable + "_JSON").c_str());
  if (config.credentials.empty()) config.credentials = Environment(variable.c_str());
  config.scratch_directory = flags.Get("--snapstore-temp-directory", config.scratch_directory);
  // Opening checks the provider and the credentials without contacting the store.
  auto opened = OpenObjectStore(config);
  if (!opened.ok()) {
    err << "ruleplane: " << opened.error().message << "\n";
    return false;
  }
  return true;
}

Result<std::unique_ptr<BackupStore>> OpenBackupStore(const StoreConfig& config) {
  auto objects = OpenObjectStore(config);
  if (!objects.ok()) return objects.error();
  return std::make_unique<BackupStore>(std::move(*objects));
}

}  // namespace ruleplane::cli
