// etcd's initial cluster ("name=peerURL,name=peerURL") and the member names
// and peer URLs it is made of. Names and URLs come from flags, the Etcd
// object and etcd's own member list; whatever reaches a configuration or an
// etcdctl command line is checked here first, so that a name holding ',',
// '=' or a line break cannot add members of its choosing.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/common/error.h"

namespace ruleplane {

// A member name: a DNS-1123 subdomain (lower-case letters, digits, '-' and
// '.', starting and ending with a letter or digit, at most 253 characters),
// as the Pod names members are named after.
Status CheckMemberName(std::string_view name);

// An http:// or https:// URL with no ',', '=', whitespace or control character.
Status CheckPeerUrl(std::string_view url);

// Every entry a valid name and peer URL; kInvalidArgument naming the first
// one that is not.
Status CheckInitialCluster(std::string_view initial_cluster);

// The names of an initial cluster, in order (a name with several peer URLs
// once per URL).
std::vector<std::string> InitialClusterNames(const std::string& initial_cluster);

}  // namespace ruleplane
