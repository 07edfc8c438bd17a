#include "cli/process_profiles.h"

#include "controller/cluster_adapters.h"
#include "member/member_init.h"
#include "observers/observed_shapes.h"

namespace ruleplane::cli {
namespace {

ProcessProfile Profile(std::string name, std::string subject, std::vector<std::string> adapter_kinds,
                       const char* shape) {
  auto observed = ParseObservedShape(shape);
  return {std::move(name), std::move(subject), std::move(adapter_kinds),
          observed.ok() ? std::move(*observed) : ObservedShape{}};
}

}  // namespace

const std::vector<ProcessProfile>& ProcessProfiles() {
  static const std::vector<ProcessProfile> profiles = {
      Profile("controller", "EtcdCluster", ClusterAdapterKinds(), kClusterSnapshotShape),
      Profile("member-init", "EtcdMemberInit", MemberInitAdapterKinds(), kMemberInitSnapshotShape)};
  return profiles;
}

}  // namespace ruleplane::cli
