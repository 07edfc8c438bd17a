#include "adapters/kubernetes/secret_data.h"

#include "adapters/kubernetes/object_fields.h"
#include "platform/base64.h"

namespace ruleplane {

Result<std::string> ReadSecretKey(KubeClient& kube, const std::string& namespace_name,
                                  const std::string& name, const std::string& key, const std::string& field,
                                  RequestLog& log) {
  if (name.empty()) return Error{ErrorCode::kFailedPrecondition, field + ".name is not set", {}};
  auto secret = kube.Get({"v1", "secrets", namespace_name, name, ""}, log);
  if (!secret.ok()) return secret.error();
  auto value = Base64Decode(FieldText(*secret, {"data", key}));
  if (!value || value->empty()) {
    return Error{ErrorCode::kFailedPrecondition,
                 "Secret " + namespace_name + "/" + name + " has no " + key + " (" + field + ")",
                 {}};
  }
  return *value;
}

}  // namespace ruleplane
