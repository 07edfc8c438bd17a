#include "cli/param_option.h"

#include <ostream>

namespace ruleplane::cli {

bool ParseParamOption(const std::string& value, ParamOverrides& overrides, std::ostream& err) {
  const size_t equals = value.find('=');
  if (equals == std::string::npos || equals == 0) {
    err << "ruleplane: --param expects NAME=VALUE, got '" << value << "'\n";
    return false;
  }
  overrides.emplace_back(value.substr(0, equals), Value::String(value.substr(equals + 1)));
  return true;
}

bool OverridesAreDeclared(const RuleLibrary& library, const ParamOverrides& overrides, std::ostream& err) {
  for (const auto& [name, value] : overrides) {
    bool declared = false;
    for (const RuleFile& file : library.files) {
      declared = declared || (file.rule_set && file.rule_set->FindParam(name) >= 0);
    }
    if (!declared) {
      err << "ruleplane: unknown param '" << name << "': no rule file declares it\n";
      return false;
    }
    for (const RuleFile& file : library.files) {
      const int index = file.rule_set ? file.rule_set->FindParam(name) : -1;
      if (index < 0) continue;
      if (auto converted = ConvertParam(file.rule_set->params[index], value); !converted.ok()) {
        err << "ruleplane: --param " << name << ": " << converted.error().message << "\n";
        return false;
      }
    }
  }
  return true;
}

}  // namespace ruleplane::cli
