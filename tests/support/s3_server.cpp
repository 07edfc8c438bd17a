#include "tests/support/s3_server.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/support/source_paths.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {

std::string S3Server::InstallDirectory() {
  const char* directory = std::getenv("RULEPLANE_OBJECT_STORES");
  return directory != nullptr && *directory != '\0' ? directory : "/var/cache/ruleplane/object-stores";
}

Result<std::unique_ptr<S3Server>> S3Server::Start(const std::string& root,
                                                  const std::vector<std::string>& buckets) {
  const std::string modules = InstallDirectory() + "/node_modules";
  if (!std::filesystem::exists(modules + "/@20minutes/s3rver/lib/cli.js"))
    return Error{ErrorCode::kNotFound,
                 "s3rver is not installed in " + modules + " (bash scripts/install-deps.sh installs it)",
                 {}};
  std::unique_ptr<S3Server> server(new S3Server());
  server->data_dir_ = root + "/s3rver-data";
  server->log_path_ = root + "/s3rver.log";
  std::filesystem::create_directories(server->data_dir_);
  // Port 0: the kernel chooses, s3rver says which; no port can be taken
  // between a choice and the bind.
  // s3rver makes its continuation tokens with DES, which OpenSSL 3 keeps in
  // its legacy provider.
  std::vector<std::string> argv = {"node",
                                   "--openssl-legacy-provider",
                                   std::string(SourceDir()) + "/tests/objectstore/s3rver.js",
                                   "--directory",
                                   server->data_dir_,
                                   "--address",
                                   "127.0.0.1",
                                   "--port",
                                   "0",
                                   "--no-vhost-buckets"};
  for (const std::string& bucket : buckets) {
    argv.push_back("--configure-bucket");
    argv.push_back(bucket);
  }
  server->keys_file_ = root + "/s3rver-keys";
  if (Status keys = server->SetAccessKeys({Credentials()}); !keys.ok()) return keys.error();
  auto process = ChildProcess::Start(argv, server->log_path_,
                                     {"NODE_PATH=" + modules, "S3RVER_KEYS_FILE=" + server->keys_file_});
  if (!process.ok()) return process.error();
  server->process_ = std::move(*process);
  const std::string marker = "S3rver listening on 127.0.0.1:";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string log = Slurp(server->log_path_);
    if (const size_t at = log.find(marker); at != std::string::npos) {
      server->port_ = std::atoi(log.c_str() + at + marker.size());
      if (server->port_ > 0) return server;
    }
    if (!server->process_.running())
      return Error{ErrorCode::kUnavailable, "s3rver exited while starting: " + log.substr(0, 2000), {}};
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return Error{ErrorCode::kDeadlineExceeded,
               "s3rver did not say it was listening within 30 s: " + Slurp(server->log_path_).substr(0, 2000),
               {}};
}

Status S3Server::SetAccessKeys(const std::vector<AwsCredentials>& keys) {
  const int generation = ++keys_generation_;
  {
    std::ofstream out(keys_file_ + ".tmp", std::ios::trunc);
    out << "generation " << generation << "\n";
    for (const AwsCredentials& key : keys) out << key.access_key_id << " " << key.secret_access_key << "\n";
    if (!out) return Error{ErrorCode::kIo, "cannot write " + keys_file_ + ".tmp", {}};
  }
  std::error_code renamed;
  std::filesystem::rename(keys_file_ + ".tmp", keys_file_, renamed);
  if (renamed) return Error{ErrorCode::kIo, "cannot rename to " + keys_file_ + ": " + renamed.message(), {}};
  if (!process_.running()) return {};  // not started yet: it reads them at its start
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (Slurp(keys_file_ + ".applied") != std::to_string(generation)) {
    if (std::chrono::steady_clock::now() > deadline)
      return Error{
          ErrorCode::kDeadlineExceeded,
          "s3rver did not apply access keys generation " + std::to_string(generation) + " within 10 s",
          {}};
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return {};
}

S3Server::~S3Server() { Stop(); }

void S3Server::Stop() { process_.Stop(std::chrono::seconds(5)); }

}  // namespace ruleplane::testing
