// Fuzzes the kubeconfig parser (ParseKubeconfig, what LoadKubeconfig runs
// on a file's text within its size bound): any YAML must give a
// configuration or an error naming the file, never a crash or an exception.
// A configuration returned has a server that is http:// or https://.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "adapters/kubernetes/kube_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ruleplane;
  if (size > kMaxKubeconfigBytes) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string path = "/fuzz/kubeconfig";
  auto config = ParseKubeconfig(text, path, "");
  if (config.ok()) {
    if (!CheckHttpUrl(config->server).ok()) std::abort();
  } else if (config.error().message.rfind(path, 0) != 0) {
    std::abort();
  }
  return 0;
}
