// A StatefulSet's pod template with the Etcd's spec applied (etcd_templates.h).
#include "adapters/kubernetes/etcd_templates.h"
#include "adapters/kubernetes/object_fields.h"
#include "adapters/kubernetes/templates/template_parts.h"

namespace ruleplane {

Value PodTemplateForSpec(const Value& etcd, const Value& pod_template) {
  Json result = ToJson(pod_template);
  const Value* spec = ValueAt(etcd, {"spec"});
  if (spec == nullptr) return pod_template;
  for (const char* field : {"labels", "annotations"}) {
    if (const Value* given = ValueAt(*spec, {field}); given != nullptr && given->is_map()) {
      const Json entries = ToJson(*given);
      for (auto entry = entries.begin(); entry != entries.end(); ++entry) {
        result["metadata"][field][entry.key()] = entry.value();
      }
    }
  }
  // The pod spec fields the Etcd's spec owns: set from it, or gone when it
  // no longer sets them (etcd-druid's builder.go createPodTemplateSpec).
  for (const char* field : kSpecOwnedPodFields) {
    const Value* given = std::string_view(field) == "priorityClassName"
                             ? ValueAt(*spec, {field})
                             : ValueAt(*spec, {"schedulingConstraints", field});
    const bool set =
        given != nullptr && !given->is_null() && !(given->is_string() && given->string_value().empty());
    if (set) {
      result["spec"][field] = ToJson(*given);
    } else if (result.contains("spec")) {
      result["spec"].erase(field);
    }
  }
  if (result.contains("spec") && result["spec"].contains("containers")) {
    for (Json& container : result["spec"]["containers"]) {
      const std::string name = container.value("name", "");
      const char* section = name == "etcd"                                       ? "etcd"
                            : name == "backup-restore" || name == "member-agent" ? "backup"
                                                                                 : nullptr;
      if (section == nullptr) continue;
      if (const std::string image = FieldText(*spec, {section, "image"}); !image.empty())
        container["image"] = image;
      if (const Value* resources = ValueAt(*spec, {section, "resources"}))
        container["resources"] = ToJson(*resources);
    }
  }
  auto value = ToValue(result);
  return value.ok() ? *value : pod_template;
}

}  // namespace ruleplane
