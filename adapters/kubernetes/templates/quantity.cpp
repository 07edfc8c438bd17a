// Kubernetes quantities ("8Gi") in bytes (etcd_templates.h).
#include "adapters/kubernetes/etcd_templates.h"

namespace ruleplane {

Result<int64_t> QuantityBytes(const std::string& quantity) {
  static const std::pair<const char*, int64_t> kSuffixes[] = {{"Ki", int64_t{1} << 10},
                                                              {"Mi", int64_t{1} << 20},
                                                              {"Gi", int64_t{1} << 30},
                                                              {"Ti", int64_t{1} << 40},
                                                              {"k", 1000},
                                                              {"M", 1000000},
                                                              {"G", 1000000000},
                                                              {"T", 1000000000000}};
  size_t digits = 0;
  while (digits < quantity.size() && quantity[digits] >= '0' && quantity[digits] <= '9') ++digits;
  const std::string suffix = quantity.substr(digits);
  int64_t unit = suffix.empty() ? 1 : 0;
  for (const auto& [name, factor] : kSuffixes) {
    if (suffix == name) unit = factor;
  }
  if (digits == 0 || digits > 12 || unit == 0) {
    return Error{
        ErrorCode::kInvalidArgument,
        "\"" + quantity + "\" is not a whole quantity of bytes (digits, then Ki, Mi, Gi, Ti, k, M, G or T)",
        {}};
  }
  return std::stoll(quantity.substr(0, digits)) * unit;
}

}  // namespace ruleplane
