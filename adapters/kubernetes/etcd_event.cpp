#include "adapters/kubernetes/etcd_event.h"

namespace ruleplane {
namespace {

Value String(std::string text) { return Value::String(std::move(text)); }

std::string TextAt(const Value& object, std::initializer_list<std::string_view> keys) {
  const Value* value = ValueAt(object, keys);
  return value != nullptr && value->is_string() ? value->string_value() : "";
}

}  // namespace

Value EtcdEvent(const Value& etcd, const EtcdEventFields& fields, Timestamp now) {
  const std::string name = TextAt(etcd, {"metadata", "name"});
  const std::string namespace_name = TextAt(etcd, {"metadata", "namespace"});
  Value::Map event = {
      {String("apiVersion"), String("v1")},
      {String("kind"), String("Event")},
      {String("metadata"), Value::MakeMap({{String(fields.name.empty() ? "generateName" : "name"),
                                            String(fields.name.empty() ? name + "." : fields.name)},
                                           {String("namespace"), String(namespace_name)}})},
      {String("involvedObject"),
       Value::MakeMap({{String("apiVersion"), String("druid.gardener.cloud/v1alpha1")},
                       {String("kind"), String("Etcd")},
                       {String("name"), String(name)},
                       {String("namespace"), String(namespace_name)},
                       {String("uid"), String(TextAt(etcd, {"metadata", "uid"}))}})},
      {String("reason"), String(fields.reason)},
      {String("message"), String(fields.message)},
      {String("type"), String(fields.type)},
      {String("source"), Value::MakeMap({{String("component"), String("ruleplane")}})},
      {String("firstTimestamp"), String(FormatRfc3339(now))},
      {String("lastTimestamp"), String(FormatRfc3339(now))},
      {String("count"), Value::Int(1)},
      {String("reportingComponent"), String("ruleplane")},
  };
  if (!fields.action.empty()) event.emplace_back(String("action"), String(fields.action));
  return Value::MakeMap(std::move(event));
}

}  // namespace ruleplane
