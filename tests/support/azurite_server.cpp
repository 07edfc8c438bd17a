#include "tests/support/azurite_server.h"

#include <cstdlib>
#include <filesystem>
#include <thread>

#include "adapters/object_store/s3_xml.h"
#include "platform/azure_shared_key.h"
#include "platform/base64.h"
#include "platform/http_client.h"
#include "tests/support/s3_server.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {

Result<std::unique_ptr<AzuriteServer>> AzuriteServer::Start(const std::string& root,
                                                            const std::vector<std::string>& containers) {
  const std::string modules = S3Server::InstallDirectory() + "/node_modules";
  const std::string main = modules + "/azurite/dist/src/blob/main.js";
  if (!std::filesystem::exists(main))
    return Error{ErrorCode::kNotFound,
                 "Azurite is not installed in " + modules + " (bash scripts/install-deps.sh installs it)",
                 {}};
  std::unique_ptr<AzuriteServer> server(new AzuriteServer());
  const std::string data = root + "/azurite-data";
  server->log_path_ = root + "/azurite.log";
  std::filesystem::create_directories(data);
  // Port 0: the kernel chooses and Azurite says which, so no port can be
  // taken between a choice and the bind. --skipApiVersionCheck: Azurite
  // refuses x-ms-version values newer than it knows, which is not what the
  // tests are about.
  const std::vector<std::string> argv = {
      "node", main,         "--blobHost", "127.0.0.1",          "--blobPort",
      "0",    "--location", data,         "--disableTelemetry", "--skipApiVersionCheck"};
  auto process = ChildProcess::Start(argv, server->log_path_, {});
  if (!process.ok()) return process.error();
  server->process_ = std::move(*process);
  const std::string marker = "successfully listens on http://127.0.0.1:";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (server->port_ == 0) {
    const std::string log = Slurp(server->log_path_);
    if (const size_t at = log.find(marker); at != std::string::npos)
      server->port_ = std::atoi(log.c_str() + at + marker.size());
    if (server->port_ > 0) break;
    if (!server->process_.running())
      return Error{ErrorCode::kUnavailable, "Azurite exited while starting: " + log.substr(0, 2000), {}};
    if (std::chrono::steady_clock::now() > deadline)
      return Error{ErrorCode::kDeadlineExceeded,
                   "Azurite did not say it was listening within 30 s: " + log.substr(0, 2000),
                   {}};
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (const std::string& container : containers) {
    if (Status made = server->ContainerRequest(container, "", false, 201); !made.ok()) return made.error();
  }
  return server;
}

Status AzuriteServer::ContainerRequest(const std::string& container, const std::string& comp,
                                       bool public_access, long expected_status) {
  SharedKeyRequest request;
  request.method = "PUT";
  request.account = kAccount;
  request.path = std::string("/") + kAccount + "/" + container;
  request.query = {{"restype", "container"}};
  if (!comp.empty()) request.query.emplace_back("comp", comp);
  request.headers = {{"x-ms-date", HttpDate(std::chrono::system_clock::now())},
                     {"x-ms-version", "2021-08-06"}};
  if (public_access) request.headers.emplace_back("x-ms-blob-public-access", "container");
  HttpExchange exchange;
  exchange.method = "PUT";
  exchange.url =
      "http://127.0.0.1:" + std::to_string(port_) + request.path + "?" + AzureQueryString(request.query);
  for (const auto& [name, value] : request.headers) exchange.headers.push_back(name + ": " + value);
  exchange.headers.push_back("Authorization: " + SignSharedKey(request, *Base64Decode(kKey)).authorization);
  HttpClient http;
  auto response = http.Exchange(exchange);
  if (!response.ok()) return response.error();
  if (response->status != expected_status)
    return Error{ErrorCode::kUnavailable,
                 "Azurite refused PUT " + exchange.url + ": HTTP " + std::to_string(response->status) + " " +
                     response->body.substr(0, 500),
                 {}};
  return {};
}

Result<std::vector<std::string>> AzuriteServer::ListWithCurl(const std::string& container) {
  // Public only while curl lists: Azurite answers reads of a public
  // container without checking their signatures, and the client's must be.
  if (Status opened = ContainerRequest(container, "acl", true, 200); !opened.ok()) return opened.error();
  auto names = ListAnonymously(container);
  if (Status closed = ContainerRequest(container, "acl", false, 200); !closed.ok()) return closed.error();
  return names;
}

Result<std::vector<std::string>> AzuriteServer::ListAnonymously(const std::string& container) const {
  std::vector<std::string> names;
  std::string marker;
  for (;;) {
    // Two a page: a few backups already take several pages.
    const std::string url = endpoint() + "/" + container + "?restype=container&comp=list&maxresults=2" +
                            (marker.empty() ? "" : "&marker=" + AzureUriEncode(marker, false));
    const ShellRun listed = RunShell("curl -sS --fail '" + url + "'");
    if (listed.exit_code != 0)
      return Error{ErrorCode::kUnavailable, "curl " + url + ": " + listed.output.substr(0, 500), {}};
    for (std::string_view blob : XmlElements(listed.output, "Blob"))
      names.push_back(XmlText(blob, "Name").value_or("?"));
    std::string next = XmlText(listed.output, "NextMarker").value_or("");
    if (next.empty()) return names;
    if (next == marker) return Error{ErrorCode::kUnavailable, "curl " + url + ": the same marker again", {}};
    marker = std::move(next);
  }
}

AzuriteServer::~AzuriteServer() { Stop(); }

void AzuriteServer::Stop() { process_.Stop(std::chrono::seconds(5)); }

}  // namespace ruleplane::testing
