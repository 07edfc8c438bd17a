// One key of a Secret the Etcd names (a CA, a client certificate): the
// controller's only reads of Secrets.
#pragma once

#include <string>

#include "adapters/kubernetes/kube_client.h"

namespace ruleplane {

// The decoded value of `key` in Secret namespace/name; kFailedPrecondition
// naming the Secret, the key and `field` (the Etcd field that names the
// Secret, "spec.backup.tls.tlsCASecretRef") when it has no such key.
Result<std::string> ReadSecretKey(KubeClient& kube, const std::string& namespace_name,
                                  const std::string& name, const std::string& key, const std::string& field,
                                  RequestLog& log);

}  // namespace ruleplane
