// The action catalogue: every action a rule may emit, with its typed
// parameters, the adapter that performs it and whether it is disruptive.
// Loaded from actions/catalogue.yaml (apiVersion ruleplane.dev/v1, kind ActionCatalogue).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/value.h"
#include "engine/rule_file/diagnostics.h"

namespace ruleplane {

struct ActionParamSpec {
  // "string", "int", "bool", "double", "duration", "timestamp", "list", "map", "any"
  std::string type = "any";
  std::string name;
  bool required = true;
  std::string description;
};

struct ActionDefinition {
  std::string name;
  std::string adapter;  // kubernetes, etcd, local
  bool disruptive = false;
  std::string description;
  std::string idempotency;  // how the executor tells the step is already done
  // How its writes are guarded against a stale decision: "observed: ..." (a
  // precondition from the snapshot the plan was made from), "idempotent: ..."
  // (the same write is right on any state it could be decided on), "none: ..."
  // (writes nothing).
  std::string fencing;
  std::string precondition;  // what must hold before it runs
  std::vector<ActionParamSpec> params;
  SourcePosition position;

  const ActionParamSpec* FindParam(std::string_view param_name) const;
};

struct ActionCatalogue {
  std::vector<ActionDefinition> actions;
  const ActionDefinition* Find(std::string_view action_name) const;
};

// Whether `value` has the catalogue type `type` ("any" accepts everything).
bool ValueHasParamType(const Value& value, std::string_view type);

struct CatalogueLoadResult {
  std::shared_ptr<const ActionCatalogue> catalogue;  // null when diagnostics has errors
  Diagnostics diagnostics;
};

// Parses one catalogue file; merge several with MergeCatalogues.
CatalogueLoadResult LoadActionCatalogue(std::string_view yaml_text, const std::string& file_name);
CatalogueLoadResult MergeCatalogues(const std::vector<std::shared_ptr<const ActionCatalogue>>& parts);

}  // namespace ruleplane
