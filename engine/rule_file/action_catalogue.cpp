#include "engine/rule_file/action_catalogue.h"

#include <algorithm>
#include <array>
#include <utility>

#include "engine/rule_file/lexical.h"
#include "engine/rule_file/yaml_reader.h"

namespace ruleplane {
namespace {

constexpr std::string_view kApiVersion = "ruleplane.dev/v1";
constexpr std::string_view kKind = "ActionCatalogue";
constexpr std::array<std::string_view, 4> kAdapters = {"kubernetes", "etcd", "local", "backup-sidecar"};
constexpr std::array<std::string_view, 9> kParamTypes = {"string",    "int",  "bool", "double", "duration",
                                                         "timestamp", "list", "map",  "any"};

template <size_t N>
bool Contains(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

template <size_t N>
std::string Join(const std::array<std::string_view, N>& names) {
  return JoinNames(std::vector<std::string>(names.begin(), names.end()));
}

class CatalogueLoader {
 public:
  CatalogueLoader(std::string_view text, const std::string& file) : reader_(text, file, &diagnostics_) {}

  CatalogueLoadResult Load() {
    LoadYamlDocument(reader_, [this](const YAML::Node& root) { LoadDocument(root); });
    std::stable_sort(diagnostics_.begin(), diagnostics_.end(), [](const Diagnostic& a, const Diagnostic& b) {
      return std::pair(a.position.line, a.position.column) < std::pair(b.position.line, b.position.column);
    });
    CatalogueLoadResult result;
    if (!HasErrors(diagnostics_))
      result.catalogue = std::make_shared<const ActionCatalogue>(std::move(catalogue_));
    result.diagnostics = std::move(diagnostics_);
    return result;
  }

 private:
  void LoadDocument(const YAML::Node& root) {
    auto top = reader_.ReadMapping(root, "the action catalogue", {"apiVersion", "kind", "actions"});
    if (!top) return;
    reader_.RequireConstant(*top, "apiVersion", kApiVersion);
    reader_.RequireConstant(*top, "kind", kKind);
    const MappingField* actions = reader_.Require(*top, "actions");
    if (actions == nullptr || !reader_.ExpectSequence(*actions)) return;
    for (const YAML::Node& node : actions->value) {
      if (auto action = LoadAction(node)) catalogue_.actions.push_back(std::move(*action));
    }
  }

  std::optional<ActionDefinition> LoadAction(const YAML::Node& node) {
    auto mapping = reader_.ReadMapping(
        node, "action",
        {"name", "adapter", "disruptive", "description", "idempotency", "fencing", "precondition", "params"});
    if (!mapping) return std::nullopt;
    ActionDefinition action;
    action.position = reader_.PositionOf(node);
    if (const MappingField* name = reader_.Require(*mapping, "name")) {
      if (std::optional<std::string> text = reader_.ReadString(*name)) {
        action.name = *text;
        if (!IsUpperCamel(*text)) {
          reader_.Error(name->value,
                        "invalid action name '" + *text + "': expected UpperCamelCase, e.g. DeletePod");
        } else if (const ActionDefinition* first = catalogue_.Find(*text)) {
          reader_.Error(name->value, "duplicate action '" + *text + "' (first at line " +
                                         std::to_string(first->position.line) + ")");
        }
      }
    }
    if (const MappingField* adapter = reader_.Require(*mapping, "adapter")) {
      if (std::optional<std::string> text = reader_.ReadString(*adapter)) {
        action.adapter = *text;
        if (!Contains(kAdapters, *text)) {
          reader_.Error(adapter->value,
                        "unknown adapter '" + *text + "'; valid adapters: " + Join(kAdapters));
        }
      }
    }
    if (const MappingField* disruptive = mapping->Find("disruptive")) {
      action.disruptive = reader_.ReadBool(*disruptive).value_or(false);
    }
    if (const MappingField* description = reader_.Require(*mapping, "description")) {
      action.description = reader_.ReadString(*description).value_or("");
    }
    if (const MappingField* idempotency = reader_.Require(*mapping, "idempotency")) {
      action.idempotency = reader_.ReadString(*idempotency).value_or("");
    }
    if (const MappingField* fencing = mapping->Find("fencing")) {
      action.fencing = reader_.ReadString(*fencing).value_or("");
    }
    if (const MappingField* precondition = mapping->Find("precondition")) {
      action.precondition = reader_.ReadString(*precondition).value_or("");
    }
    if (const MappingField* params = mapping->Find("params"); params && reader_.ExpectSequence(*params)) {
      for (const YAML::Node& param_node : params->value) {
        if (auto param = LoadParam(param_node, action)) action.params.push_back(std::move(*param));
      }
    }
    return action;
  }

  std::optional<ActionParamSpec> LoadParam(const YAML::Node& node, const ActionDefinition& action) {
    auto mapping = reader_.ReadMapping(node, "action param", {"name", "type", "required", "description"});
    if (!mapping) return std::nullopt;
    ActionParamSpec param;
    if (const MappingField* name = reader_.Require(*mapping, "name")) {
      if (std::optional<std::string> text = reader_.ReadString(*name)) {
        param.name = *text;
        if (!IsIdentifier(*text)) {
          reader_.Error(name->value, "invalid parameter name '" + *text + "': expected an identifier");
        } else if (action.FindParam(*text) != nullptr) {
          reader_.Error(name->value, "duplicate parameter '" + *text + "' of action '" + action.name + "'");
        }
      }
    }
    if (const MappingField* type = mapping->Find("type")) {
      if (std::optional<std::string> text = reader_.ReadString(*type)) {
        param.type = *text;
        if (!Contains(kParamTypes, *text)) {
          reader_.Error(type->value,
                        "unknown parameter type '" + *text + "'; valid types: " + Join(kParamTypes));
        }
      }
    }
    if (const MappingField* required = mapping->Find("required")) {
      param.required = reader_.ReadBool(*required).value_or(true);
    }
    if (const MappingField* description = mapping->Find("description")) {
      param.description = reader_.ReadString(*description).value_or("");
    }
    return param;
  }

  Diagnostics diagnostics_;
  YamlReader reader_;
  ActionCatalogue catalogue_;
};

}  // namespace

const ActionParamSpec* ActionDefinition::FindParam(std::string_view param_name) const {
  for (const ActionParamSpec& param : params) {
    if (param.name == param_name) return &param;
  }
  return nullptr;
}

const ActionDefinition* ActionCatalogue::Find(std::string_view action_name) const {
  for (const ActionDefinition& action : actions) {
    if (action.name == action_name) return &action;
  }
  return nullptr;
}

bool ValueHasParamType(const Value& value, std::string_view type) {
  if (type == "any") return true;
  if (type == "string") return value.is_string();
  if (type == "int") return value.is_int();
  if (type == "bool") return value.is_bool();
  // An int is accepted where a double is expected: rule authors write `1`.
  if (type == "double") return value.is_double() || value.is_int();
  if (type == "duration") return value.kind() == Value::Kind::kDuration;
  if (type == "timestamp") return value.kind() == Value::Kind::kTimestamp;
  if (type == "list") return value.is_list();
  if (type == "map") return value.is_map();
  return false;
}

CatalogueLoadResult LoadActionCatalogue(std::string_view yaml_text, const std::string& file_name) {
  return CatalogueLoader(yaml_text, file_name).Load();
}

CatalogueLoadResult MergeCatalogues(const std::vector<std::shared_ptr<const ActionCatalogue>>& parts) {
  ActionCatalogue merged;
  Diagnostics diagnostics;
  for (const auto& part : parts) {
    if (part == nullptr) continue;
    for (const ActionDefinition& action : part->actions) {
      if (const ActionDefinition* first = merged.Find(action.name)) {
        diagnostics.push_back({Diagnostic::Severity::kError, action.position,
                               "duplicate action '" + action.name + "' (also defined at " +
                                   first->position.file + ":" + std::to_string(first->position.line) + ")"});
        continue;
      }
      merged.actions.push_back(action);
    }
  }
  CatalogueLoadResult result;
  if (!HasErrors(diagnostics)) result.catalogue = std::make_shared<const ActionCatalogue>(std::move(merged));
  result.diagnostics = std::move(diagnostics);
  return result;
}

}  // namespace ruleplane
