#include "adapters/local/initial_cluster.h"

#include <cctype>
#include <sstream>

#include "platform/http_client.h"

namespace ruleplane {
namespace {

// The text as it may be shown: control characters and non-ASCII as '?', at most 100 characters.
std::string Shown(std::string_view text) {
  std::string shown;
  for (char c : text.substr(0, 100)) shown += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  return shown + (text.size() > 100 ? "..." : "");
}

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

}  // namespace

Status CheckMemberName(std::string_view name) {
  bool valid = !name.empty() && name.size() <= 253 && IsLowerAlnum(name.front()) && IsLowerAlnum(name.back());
  for (char c : name) valid = valid && (IsLowerAlnum(c) || c == '-' || c == '.');
  if (valid) return {};
  return Error{ErrorCode::kInvalidArgument,
               "member name '" + Shown(name) +
                   "' is not a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', at most 253)",
               {}};
}

Status CheckPeerUrl(std::string_view url) {
  if (Status scheme = CheckHttpUrl(url); !scheme.ok()) return scheme;
  for (char c : url) {
    if (c == ',' || c == '=' || !std::isgraph(static_cast<unsigned char>(c))) {
      return Error{ErrorCode::kInvalidArgument,
                   "peer URL '" + Shown(url) + "' holds ',', '=', a space or a control character",
                   {}};
    }
  }
  return {};
}

Status CheckInitialCluster(std::string_view initial_cluster) {
  if (initial_cluster.empty()) return Error{ErrorCode::kInvalidArgument, "the initial cluster is empty", {}};
  size_t start = 0;
  while (start <= initial_cluster.size()) {
    const size_t comma = std::min(initial_cluster.find(',', start), initial_cluster.size());
    const std::string_view entry = initial_cluster.substr(start, comma - start);
    const size_t equals = entry.find('=');
    if (equals == std::string_view::npos) {
      return Error{ErrorCode::kInvalidArgument,
                   "initial cluster entry '" + Shown(entry) + "' is not name=peerURL",
                   {}};
    }
    for (const Status& checked :
         {CheckMemberName(entry.substr(0, equals)), CheckPeerUrl(entry.substr(equals + 1))}) {
      if (!checked.ok())
        return Error{ErrorCode::kInvalidArgument, "initial cluster: " + checked.error().message, {}};
    }
    start = comma + 1;
  }
  return {};
}

std::vector<std::string> InitialClusterNames(const std::string& initial_cluster) {
  std::vector<std::string> names;
  std::stringstream entries(initial_cluster);
  std::string entry;
  while (std::getline(entries, entry, ',')) names.push_back(entry.substr(0, entry.find('=')));
  return names;
}

}  // namespace ruleplane
