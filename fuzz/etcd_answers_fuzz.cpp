// Fuzzes what ruleplane reads from etcd's answers to the member list and
// status calls: any bytes must give a member list, a status or an error,
// never a crash; a member list that is returned has members with IDs.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "adapters/etcd/etcd_client.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ruleplane;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto members = ParseMemberList(text);
  if (members.ok()) {
    if (members->empty()) std::abort();
    for (const EtcdMember& member : *members) {
      if (member.id == 0) std::abort();
    }
  }
  auto status = ParseEtcdStatus(text, "http://127.0.0.1:2379");
  if (status.ok() && status->endpoint != "http://127.0.0.1:2379") std::abort();
  return 0;
}
