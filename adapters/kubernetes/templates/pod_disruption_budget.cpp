// The PodDisruptionBudget <etcd> over the member pods (etcd_templates.h).
#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/object_fields.h"
#include "adapters/kubernetes/templates/template_parts.h"

namespace ruleplane {

Value EtcdPodDisruptionBudget(const Value& etcd, const Value& min_available, const Value& selector,
                              const std::string& api_version) {
  return Value::MakeMap(
      {{Value::String("apiVersion"), Value::String(api_version)},
       {Value::String("kind"), Value::String("PodDisruptionBudget")},
       {Value::String("metadata"),
        Value::MakeMap({{Value::String("name"), Value::String(FieldText(etcd, {"metadata", "name"}))},
                        {Value::String("ownerReferences"), Value::MakeList({ControllerReference(etcd)})}})},
       {Value::String("spec"), Value::MakeMap({{Value::String("minAvailable"), min_available},
                                               {Value::String("selector"), selector}})}});
}

}  // namespace ruleplane
