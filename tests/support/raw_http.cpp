#include "tests/support/raw_http.h"

#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace ruleplane::testing {

// Sends everything, without SIGPIPE; false when the peer went away.
bool SendAll(int connection, std::string_view data) {
  while (!data.empty()) {
    const ssize_t sent = send(connection, data.data(), data.size(), MSG_NOSIGNAL);
    if (sent <= 0) return false;
    data.remove_prefix(static_cast<size_t>(sent));
  }
  return true;
}

// One request: method, path and body (by Content-Length); false when the
// connection ends first.
bool ReadRequest(int connection, std::string& method, std::string& path, std::string& body) {
  std::string data;
  char buffer[4096];
  size_t header_end;
  while ((header_end = data.find("\r\n\r\n")) == std::string::npos) {
    const ssize_t got = recv(connection, buffer, sizeof buffer, 0);
    if (got <= 0) return false;
    data.append(buffer, static_cast<size_t>(got));
  }
  const std::string head = data.substr(0, header_end);
  const size_t space = head.find(' ');
  const size_t second = head.find(' ', space + 1);
  if (space == std::string::npos || second == std::string::npos) return false;
  method = head.substr(0, space);
  path = head.substr(space + 1, second - space - 1);
  size_t length = 0;
  std::string lower = head;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (const size_t at = lower.find("\r\ncontent-length:"); at != std::string::npos) {
    length = std::strtoul(head.c_str() + at + 17, nullptr, 10);
  }
  body = data.substr(header_end + 4);
  while (body.size() < length) {
    const ssize_t got = recv(connection, buffer, sizeof buffer, 0);
    if (got <= 0) return false;
    body.append(buffer, static_cast<size_t>(got));
  }
  return true;
}

}  // namespace ruleplane::testing
