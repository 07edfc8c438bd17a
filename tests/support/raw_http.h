// The two halves of HTTP/1.1 that the test servers (SlowSnapshotProxy,
// HostileHttpServer) speak on a raw socket: reading one request (its head
// and a Content-Length body) and sending bytes without SIGPIPE.
#pragma once

#include <string>
#include <string_view>

namespace ruleplane::testing {

// Sends everything, without SIGPIPE; false when the peer went away.
bool SendAll(int connection, std::string_view data);

// One request: method, path and body (by Content-Length); false when the
// connection ends first.
bool ReadRequest(int connection, std::string& method, std::string& path, std::string& body);

}  // namespace ruleplane::testing
