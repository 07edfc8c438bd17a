// EtcdActionContext: what every etcd action handler (etcd_action_handler.h)
// is given: the client of the cluster, and its member list as EtcdAdapter
// read it just before. Every check and every change starts from that list: a
// step retried after a timeout or a crash never adds a second member or
// removes the wrong one.
#pragma once

#include <vector>

#include "adapters/etcd/etcd_client.h"

namespace ruleplane {

struct EtcdActionContext {
  EtcdClient& client;
  std::vector<EtcdMember> members;
};

}  // namespace ruleplane
