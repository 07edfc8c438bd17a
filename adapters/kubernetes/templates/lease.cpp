// A Lease owned by the Etcd: a member's, or a snapshot Lease (etcd_templates.h).
#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/object_fields.h"
#include "adapters/kubernetes/templates/template_parts.h"

namespace ruleplane {

Value EtcdLease(const Value& etcd, const std::string& name, const std::string& purpose) {
  return Value::MakeMap(
      {{Value::String("apiVersion"), Value::String("coordination.k8s.io/v1")},
       {Value::String("kind"), Value::String("Lease")},
       {Value::String("metadata"),
        Value::MakeMap({{Value::String("name"), Value::String(name)},
                        {Value::String("labels"),
                         Value::MakeMap({{Value::String("app.kubernetes.io/part-of"),
                                          Value::String(FieldText(etcd, {"metadata", "name"}))},
                                         {Value::String("gardener.cloud/purpose"), Value::String(purpose)}})},
                        {Value::String("ownerReferences"), Value::MakeList({ControllerReference(etcd)})}})}});
}

}  // namespace ruleplane
