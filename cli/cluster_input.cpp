#include "cli/cluster_input.h"

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <ostream>

#include "cli/flags.h"
#include "controller/cluster_adapters.h"
#include "engine/common/json_value.h"
#include "observers/cluster_observer.h"
#include "observers/data_volume_observer.h"
#include "observers/maintenance_observer.h"

namespace ruleplane::cli {
namespace {

constexpr const char* kObserveClusterUsage =
    R"(usage: ruleplane observe cluster [--kubeconfig FILE] [--context NAME] [-n NAMESPACE] NAME|NAMESPACE/NAME

Prints the EtcdClusterSnapshot of one Etcd object, read from the API server:
the Etcd, its StatefulSet, the Leases it owns, the Pods its StatefulSet owns
and its PodDisruptionBudget, as the API returns them, and each member Pod's
/v3/maintenance/status (maintenanceStatus: its answer, or why there is none),
asked over its client URL at the Pod's IP, with the Etcd's client TLS. Reads
only.

The API server: --kubeconfig, else $KUBECONFIG, else ~/.kube/config, else (in
a Pod) the service account's token and CA. Exec plugins are not supported.
)";

}  // namespace

Result<KubeConfig> ResolveKubeConfig(const std::string& kubeconfig, const std::string& context) {
  if (!kubeconfig.empty()) return LoadKubeconfig(kubeconfig, context);
  if (const char* env = std::getenv("KUBECONFIG"); env != nullptr && *env != '\0') {
    const std::string first = std::string(env).substr(0, std::string(env).find(':'));
    return LoadKubeconfig(first, context);
  }
  if (const char* home = std::getenv("HOME"); home != nullptr) {
    const std::string path = std::string(home) + "/.kube/config";
    if (std::filesystem::is_regular_file(path)) return LoadKubeconfig(path, context);
  }
  return InClusterConfig();
}

Result<Snapshot> ObserveClusterSnapshot(const ClusterSource& source) {
  auto config = ResolveKubeConfig(source.kubeconfig, source.context);
  if (!config.ok()) return config.error();
  std::string namespace_name = source.namespace_name.empty() ? config->namespace_name : source.namespace_name;
  std::string name = source.cluster;
  if (const size_t slash = name.find('/'); slash != std::string::npos) {
    namespace_name = name.substr(0, slash);
    name = name.substr(slash + 1);
  }
  if (name.empty() || namespace_name.empty()) {
    return Error{ErrorCode::kInvalidArgument,
                 "the cluster is NAME or NAMESPACE/NAME, got '" + source.cluster + "'",
                 {}};
  }
  auto now = TimestampFromUnixSeconds(std::time(nullptr));
  if (!now.ok()) return now.error();
  KubeClient client(*config);
  RequestLog reads;
  auto observed = ObserveCluster(client, namespace_name, name, *now, reads);
  if (observed.ok()) observed = WithUnboundClaimWarnings(*observed, client, reads);
  if (!observed.ok()) return observed;
  return WithMaintenanceStatus(*observed,
                               ResolveMemberEndpoints(observed->document, client, reads, kMemberCallTimeout));
}

int RunObserveCluster(const Args& args, std::ostream& out, std::ostream& err) {
  if (HelpRequested(args)) return PrintUsage(kObserveClusterUsage, out);
  Flags flags({{"--kubeconfig"}, {"--context"}, {"-n"}});
  if (!flags.Parse(args, err, kObserveClusterUsage)) return kExitUsage;
  if (flags.positional().size() != 1) {
    err << kObserveClusterUsage;
    return kExitUsage;
  }
  auto snapshot = ObserveClusterSnapshot(
      {flags.Get("--kubeconfig"), flags.Get("--context"), flags.positional()[0], flags.Get("-n")});
  if (!snapshot.ok()) {
    err << "ruleplane: observe cluster: " << snapshot.error().message << "\n";
    return snapshot.error().code == ErrorCode::kInvalidArgument ? kExitUsage : kExitFinding;
  }
  out << FormatJson(snapshot->document, 2) << "\n";
  return out ? kExitOk : kExitUsage;
}

}  // namespace ruleplane::cli
