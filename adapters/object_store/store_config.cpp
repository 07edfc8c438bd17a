#include "adapters/object_store/store_config.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <span>

#include "adapters/local/local_object_store.h"
#include "adapters/object_store/bucket_object_store.h"
#include "adapters/object_store/reopening_object_store.h"
#include "engine/common/json_value.h"
#include "platform/file_input.h"

namespace ruleplane {
namespace {

namespace fs = std::filesystem;

// The keys etcd-backup-restore reads (pkg/snapstore/s3_snapstore.go,
// readAWSCredentialFromDir and awsCredentials).
constexpr const char* kS3Keys[] = {"accessKeyID",   "secretAccessKey",  "region",
                                   "endpoint",      "s3ForcePathStyle", "insecureSkipVerify",
                                   "trustedCaCert", "sseCustomerKey",   "sseCustomerAlgorithm",
                                   "sessionToken"};
// The keys etcd-backup-restore reads for ABS (pkg/snapstore/abs_snapstore.go,
// readABSCredentialFiles and absCredentials; its chart's emulatorEnabled is
// not read there, an emulator is reached through the endpoint override).
constexpr const char* kAbsKeys[] = {"storageAccount", "storageKey", "domain"};

Error Invalid(const std::string& message) { return Error{ErrorCode::kInvalidArgument, message, {}}; }

std::string TrimmedLine(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

// A *.json file in the directory, "" when none.
std::string JsonFileIn(const std::string& directory) {
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(directory, error)) {
    if (entry.path().extension() == ".json") return entry.path().string();
  }
  return "";
}

// key -> (value, where it came from), strings as given (booleans as
// "true"/"false").
using CredentialValues = std::map<std::string, std::pair<std::string, std::string>>;

Result<CredentialValues> ReadCredentialValues(const std::string& path, std::span<const char* const> keys) {
  CredentialValues values;
  std::error_code error;
  const bool directory = fs::is_directory(path, error);
  const std::string json_file = directory ? JsonFileIn(path) : path;
  if (!json_file.empty()) {
    auto text = ReadRegularFile(json_file, kMaxConfigFileBytes);
    if (!text.ok()) return text.error();
    auto parsed = ParseJson(*text);
    if (!parsed.ok() || !parsed->is_map())
      return Invalid(json_file + ": not a JSON object of credentials" +
                     (parsed.ok() ? "" : ": " + parsed.error().message));
    for (const char* key : keys) {
      const Value* value = parsed->Find(key);
      if (value == nullptr || value->is_null()) continue;
      if (value->is_bool()) {
        values[key] = {value->bool_value() ? "true" : "false", json_file + " key " + key};
      } else if (value->is_string()) {
        values[key] = {value->string_value(), json_file + " key " + key};
      } else {
        return Invalid(json_file + ": " + key + " must be a string or a boolean");
      }
    }
    return values;
  }
  if (!directory)
    return Invalid("the backup store credentials " + path + " are neither a directory nor a file");
  for (const char* key : keys) {
    const std::string file = path + "/" + key;
    if (!fs::exists(file, error)) continue;
    auto text = ReadRegularFile(file, kMaxConfigFileBytes);
    if (!text.ok()) return text.error();
    values[key] = {TrimmedLine(*text), file};
  }
  return values;
}

Result<bool> BoolValue(const CredentialValues& values, const std::string& key) {
  auto found = values.find(key);
  if (found == values.end()) return false;
  std::string text = found->second.first;
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  // Go's strconv.ParseBool, which etcd-backup-restore uses.
  if (text == "1" || text == "t" || text == "true") return true;
  if (text == "0" || text == "f" || text == "false") return false;
  return Invalid(found->second.second + ": '" + found->second.first + "' is not true or false");
}

}  // namespace

Result<S3Config> ReadS3Config(const StoreConfig& config) {
  if (config.container.empty()) return Invalid("the S3 store needs a bucket (--store-container)");
  if (config.credentials.empty())
    return Invalid(
        "the S3 store needs credentials: a directory or JSON file (--store-credentials or "
        "$AWS_APPLICATION_CREDENTIALS)");
  auto values = ReadCredentialValues(config.credentials, kS3Keys);
  if (!values.ok()) return values.error();
  auto text = [&](const std::string& key) {
    auto found = values->find(key);
    return found == values->end() ? std::string() : found->second.first;
  };
  S3Config s3;
  s3.bucket = config.container;
  s3.credentials = {text("accessKeyID"), text("secretAccessKey"), text("sessionToken")};
  if (s3.credentials.access_key_id.empty() || s3.credentials.secret_access_key.empty())
    return Invalid("the backup store credentials " + config.credentials +
                   " have no accessKeyID or secretAccessKey");
  s3.endpoint = config.endpoint_override.empty() ? text("endpoint") : config.endpoint_override;
  s3.region = text("region");
  if (s3.region.empty()) {
    if (s3.endpoint.empty())
      return Invalid("the backup store credentials " + config.credentials + " have no region");
    s3.region = "us-east-1";  // what S3-compatible stores accept
  }
  auto path_style = BoolValue(*values, "s3ForcePathStyle");
  auto insecure = BoolValue(*values, "insecureSkipVerify");
  if (!path_style.ok()) return path_style.error();
  if (!insecure.ok()) return insecure.error();
  if (*path_style) s3.addressing = S3Addressing::kPathStyle;
  s3.tls.insecure_skip_verify = *insecure;
  s3.tls.ca_pem = text("trustedCaCert");
  const std::string customer_key = text("sseCustomerKey"), algorithm = text("sseCustomerAlgorithm");
  if (customer_key.empty() != algorithm.empty())
    return Invalid("the backup store credentials " + config.credentials +
                   ": sseCustomerKey and sseCustomerAlgorithm go together");
  if (!customer_key.empty()) {
    s3.encryption.kind = S3Encryption::Kind::kCustomerKey;
    s3.encryption.customer_key = customer_key;
    s3.encryption.customer_algorithm = algorithm;
  }
  return s3;
}

Result<AzureBlobConfig> ReadAbsConfig(const StoreConfig& config) {
  if (config.container.empty()) return Invalid("the ABS store needs a container (--store-container)");
  if (config.credentials.empty())
    return Invalid(
        "the ABS store needs credentials: a directory or JSON file (--store-credentials or "
        "$AZURE_APPLICATION_CREDENTIALS)");
  auto values = ReadCredentialValues(config.credentials, kAbsKeys);
  if (!values.ok()) return values.error();
  auto text = [&](const std::string& key) {
    auto found = values->find(key);
    return found == values->end() ? std::string() : found->second.first;
  };
  AzureBlobConfig abs;
  abs.account = text("storageAccount");
  abs.key = text("storageKey");
  abs.container = config.container;
  if (abs.account.empty() || abs.key.empty())
    return Invalid("the backup store credentials " + config.credentials +
                   " have no storageAccount or storageKey");
  // As etcd-backup-restore: the endpoint override (the account's endpoint,
  // "http://127.0.0.1:10000/devstoreaccount1" for Azurite) wins over the
  // credentials' domain, which wins over Azure's blob.core.windows.net.
  const std::string domain = text("domain");
  if (!config.endpoint_override.empty())
    abs.endpoint = config.endpoint_override;
  else if (!domain.empty())
    abs.endpoint = "https://" + abs.account + "." + domain;
  return abs;
}

namespace {

// Every credential value the provider reads, as one string to compare.
Result<std::string> CredentialsFingerprint(const StoreConfig& config) {
  auto values = ReadCredentialValues(config.credentials, config.provider == "ABS"
                                                             ? std::span<const char* const>(kAbsKeys)
                                                             : std::span<const char* const>(kS3Keys));
  if (!values.ok()) return values.error();
  std::string fingerprint;
  for (const auto& [key, value] : *values) fingerprint += key + "=" + value.first + "\n";
  return fingerprint;
}

// The store as the credentials say now.
Result<std::unique_ptr<ObjectStore>> OpenObjectStoreOnce(const StoreConfig& config) {
  if (config.prefix.empty()) return Invalid("the backup store needs a prefix (--store-prefix)");
  if (config.provider == "Local") {
    if (config.container.empty()) return Invalid("the Local store needs a directory (--store-container)");
    return std::unique_ptr<ObjectStore>(
        std::make_unique<LocalObjectStore>(config.container + "/" + config.prefix));
  }
  if (config.provider == "S3") {
    auto s3 = ReadS3Config(config);
    if (!s3.ok()) return s3.error();
    auto client = S3Client::Create(*s3);
    if (!client.ok()) return client.error();
    return OpenS3Bucket(std::move(*client), config.prefix, config.scratch_directory);
  }
  if (config.provider == "ABS") {
    auto abs = ReadAbsConfig(config);
    if (!abs.ok()) return abs.error();
    auto client = AzureBlobClient::Create(*abs);
    if (!client.ok()) return client.error();
    return OpenAzureContainer(std::move(*client), config.prefix, config.scratch_directory);
  }
  for (const char* later : {"GCS", "Swift", "OSS", "ECS", "OCS"}) {
    if (config.provider == later)
      return Invalid(
          "the storage provider " + config.provider +
          " is not supported by ruleplane yet: Local, S3 and ABS are (S3-compatible stores such as "
          "MinIO, Dell ECS and OpenShift OCS through S3 with an endpoint override)");
  }
  return Invalid("unknown storage provider '" + config.provider + "': Local, S3 or ABS");
}

}  // namespace

Result<std::unique_ptr<ObjectStore>> OpenObjectStore(const StoreConfig& config) {
  if (config.provider != "S3" && config.provider != "ABS") return OpenObjectStoreOnce(config);
  // Read before the store is opened: a change in between is seen at the first operation.
  auto fingerprint = CredentialsFingerprint(config);
  if (!fingerprint.ok()) return fingerprint.error();
  auto opened = OpenObjectStoreOnce(config);
  if (!opened.ok()) return opened.error();
  return std::unique_ptr<ObjectStore>(std::make_unique<ReopeningObjectStore>(
      std::move(*opened), std::move(*fingerprint), [config] { return OpenObjectStoreOnce(config); },
      [config] { return CredentialsFingerprint(config); }));
}

Result<int64_t> CredentialsModifiedTime(const std::string& path) {
  if (path.empty()) return int64_t{0};
  std::error_code error;
  std::vector<std::string> files;
  if (fs::is_directory(path, error)) {
    for (const auto& entry : fs::directory_iterator(path, error)) files.push_back(entry.path());
  } else {
    files.push_back(path);
  }
  if (error) return Error{ErrorCode::kIo, "cannot list " + path + ": " + error.message(), {}};
  int64_t newest = 0;
  for (const std::string& file : files) {
    // stat follows the links a mounted Secret is made of (..data -> ..2024_...).
    struct stat info {};
    if (stat(file.c_str(), &info) == 0) newest = std::max<int64_t>(newest, info.st_mtim.tv_sec);
  }
  return newest;
}

}  // namespace ruleplane
