// A real Azure Blob Storage emulator for tests: Azurite (the blob service
// only) from the npm registry, started on a loopback port the kernel
// chooses, its data in the test's own temporary directory, stopped by its
// PID. scripts/install-deps.sh installs it with `npm ci` from
// tests/objectstore/package-lock.json into /var/cache/ruleplane/object-stores
// (RULEPLANE_OBJECT_STORES moves it), beside s3rver.
//
// Azurite knows the emulator's well-known account (devstoreaccount1 and its
// published key), addressed path-style
// (http://127.0.0.1:<port>/devstoreaccount1/<container>/<blob>). It
// verifies the Shared Key signature of every request to a private
// container and answers 403 AuthorizationFailure when it differs (Azure
// itself answers AuthenticationFailed). The containers made at start are
// private; ListWithCurl opens one to anonymous reads while plain curl lists
// it, independently of ruleplane's client.
//
//   auto server = AzuriteServer::Start(dir.path(), {"backups"});
//   AzureBlobConfig config{.account = AzuriteServer::kAccount, .key = AzuriteServer::kKey,
//                          .container = "backups", .endpoint = (*server)->endpoint()};
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/common/error.h"
#include "platform/process.h"

namespace ruleplane::testing {

class AzuriteServer {
 public:
  static constexpr const char* kAccount = "devstoreaccount1";
  static constexpr const char* kKey =
      "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

  // The server with these (private) containers, its data and log under
  // `root`; ready when this returns.
  static Result<std::unique_ptr<AzuriteServer>> Start(const std::string& root,
                                                      const std::vector<std::string>& containers);
  ~AzuriteServer();  // stops the server (SIGTERM, then SIGKILL)
  AzuriteServer(const AzuriteServer&) = delete;
  AzuriteServer& operator=(const AzuriteServer&) = delete;

  int port() const { return port_; }
  // The account's endpoint, path-style: "http://127.0.0.1:<port>/devstoreaccount1".
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_) + "/" + kAccount; }
  const std::string& log_path() const { return log_path_; }
  void Stop();

  // The names of the committed blobs in `container`, as curl lists them
  // anonymously (List Blobs, page after page), the container public only
  // meanwhile; kUnavailable when curl fails. Not while a client works on the
  // container: its reads would then pass unchecked.
  Result<std::vector<std::string>> ListWithCurl(const std::string& container);

 private:
  AzuriteServer() = default;
  // A signed PUT on the container: create it ("") or set its access ("acl").
  Status ContainerRequest(const std::string& container, const std::string& comp, bool public_access,
                          long expected_status);
  Result<std::vector<std::string>> ListAnonymously(const std::string& container) const;
  ChildProcess process_;
  int port_ = 0;
  std::string log_path_;
};

}  // namespace ruleplane::testing
