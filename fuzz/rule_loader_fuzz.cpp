// Fuzzes the rule loader (and the catalogue loader, on the same bytes): any
// input must give diagnostics or a rule set, never a crash, and every
// diagnostic must point into the input.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "engine/rule_file/action_catalogue.h"
#include "engine/rule_file/diagnostics.h"
#include "engine/rule_file/rule_loader.h"

namespace {

constexpr std::string_view kCatalogue = R"(apiVersion: ruleplane.dev/v1
kind: ActionCatalogue
actions:
  - name: ScaleStatefulSet
    adapter: kubernetes
    disruptive: true
    description: scale
    idempotency: replicas equal
    params:
      - {name: replicas, type: int}
  - name: SetMemberStatus
    adapter: kubernetes
    description: set
    idempotency: fields equal
    params:
      - {name: name, type: string}
      - {name: status, type: string}
      - {name: reason, type: string, required: false}
)";

void CheckDiagnostics(const ruleplane::Diagnostics& diagnostics, std::string_view text) {
  int64_t lines = 1;
  for (char c : text) lines += c == '\n' ? 1 : 0;
  for (const ruleplane::Diagnostic& diagnostic : diagnostics) {
    const ruleplane::SourcePosition& position = diagnostic.position;
    if (position.line < 1 || position.line > lines || position.column < 1 || diagnostic.message.empty()) {
      std::abort();
    }
    (void)ruleplane::FormatDiagnostic(diagnostic, text);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto catalogue = ruleplane::LoadActionCatalogue(kCatalogue, "catalogue.yaml").catalogue;
  if (catalogue == nullptr) std::abort();
  std::string_view text(reinterpret_cast<const char*>(data), size);

  ruleplane::RuleLoadResult rules = ruleplane::LoadRuleFile(text, "fuzz.yaml", catalogue.get());
  if ((rules.rule_set == nullptr) != ruleplane::HasErrors(rules.diagnostics)) std::abort();
  CheckDiagnostics(rules.diagnostics, text);

  ruleplane::CatalogueLoadResult actions = ruleplane::LoadActionCatalogue(text, "fuzz.yaml");
  if ((actions.catalogue == nullptr) != ruleplane::HasErrors(actions.diagnostics)) std::abort();
  CheckDiagnostics(actions.diagnostics, text);
  return 0;
}
