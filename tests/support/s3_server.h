// A real S3-compatible server for tests: s3rver from the npm registry, in
// the fork that verifies AWS Signature V4 (@20minutes/s3rver; the original
// s3rver 3.7.1 accepts any V4 signature from a known access key), started
// by tests/objectstore/s3rver.js on a loopback port the kernel chooses, its
// data in the test's own temporary directory, stopped by its PID.
//
// scripts/install-deps.sh installs it with `npm ci` from
// tests/objectstore/package-lock.json into /var/cache/ruleplane/object-stores
// (RULEPLANE_OBJECT_STORES moves it). s3rver knows one account: access key
// S3RVER, secret S3RVER, region us-east-1; it verifies the signature of
// every request, answering 403 SignatureDoesNotMatch or InvalidAccessKeyId.
//
//   auto server = S3Server::Start(dir.path(), {"backups"});
//   S3Config config{.endpoint = (*server)->endpoint(), .bucket = "backups",
//                   .credentials = S3Server::Credentials()};
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/common/error.h"
#include "platform/aws_sigv4.h"
#include "platform/process.h"

namespace ruleplane::testing {

class S3Server {
 public:
  // The server with these buckets (created at start), its data and log
  // under `root`; ready when this returns.
  static Result<std::unique_ptr<S3Server>> Start(const std::string& root,
                                                 const std::vector<std::string>& buckets);
  ~S3Server();  // stops the server (SIGTERM, then SIGKILL)
  S3Server(const S3Server&) = delete;
  S3Server& operator=(const S3Server&) = delete;

  static AwsCredentials Credentials() { return {"S3RVER", "S3RVER", ""}; }
  // Accepts exactly these access keys from now on (S3RVER's included only if
  // listed): a key left out is revoked, and requests signed with it answer
  // 403 InvalidAccessKeyId. Returns once the server says it applied them.
  Status SetAccessKeys(const std::vector<AwsCredentials>& keys);
  // Where the servers are installed: $RULEPLANE_OBJECT_STORES or
  // /var/cache/ruleplane/object-stores.
  static std::string InstallDirectory();

  int port() const { return port_; }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  const std::string& data_dir() const { return data_dir_; }
  const std::string& log_path() const { return log_path_; }
  pid_t pid() const { return process_.pid(); }
  void Stop();

 private:
  S3Server() = default;
  ChildProcess process_;
  int port_ = 0;
  std::string data_dir_;
  std::string log_path_;
  std::string keys_file_;
  int keys_generation_ = 0;
};

}  // namespace ruleplane::testing
