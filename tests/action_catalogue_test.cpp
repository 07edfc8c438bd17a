#include "engine/rule_file/action_catalogue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "actions/backup_sidecar/backup_sidecar_action_handler.h"
#include "actions/etcd/etcd_action_handler.h"
#include "actions/kubernetes/kubernetes_action_handler.h"
#include "actions/local/local_action_handler.h"
#include "tests/support/source_paths.h"

namespace ruleplane {
namespace {

std::string ReadRepoFile(const std::string& relative) {
  std::ifstream in(std::filesystem::path(testing::SourceDir()) / relative, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string Messages(const CatalogueLoadResult& result, std::string_view text) {
  std::string out;
  for (const Diagnostic& diagnostic : result.diagnostics) out += FormatDiagnostic(diagnostic, text);
  return out;
}

TEST(ActionCatalogueTest, RepoCatalogueLoadsAndHasTheStatusActions) {
  std::string text = ReadRepoFile("actions/catalogue.yaml");
  CatalogueLoadResult result = LoadActionCatalogue(text, "actions/catalogue.yaml");
  ASSERT_TRUE(result.catalogue) << Messages(result, text);
  EXPECT_TRUE(result.diagnostics.empty());
  const ActionCatalogue& catalogue = *result.catalogue;
  const std::map<std::string, std::vector<std::string>> expected = {
      {"SetEtcdCondition", {"type", "status", "reason", "message"}},
      {"SetMemberStatus", {"name", "id", "role", "status", "reason"}},
      {"RemoveStatusMember", {"name"}},
      {"SetClusterSize", {"size"}},
      {"ScaleStatefulSet", {"replicas"}},
      {"DeletePod", {"name"}},
      {"CreateMemberLease", {"name"}},
      {"DeleteMemberLease", {"name"}},
      {"SetPdbMinAvailable", {"minAvailable"}},
      {"RaiseAlert", {"severity", "summary"}},
  };
  for (const auto& [name, params] : expected) {
    const ActionDefinition* action = catalogue.Find(name);
    ASSERT_NE(action, nullptr) << name;
    EXPECT_FALSE(action->description.empty()) << name;
    EXPECT_FALSE(action->idempotency.empty()) << name;
    for (const std::string& param : params)
      EXPECT_NE(action->FindParam(param), nullptr) << name << "." << param;
  }
  const ActionDefinition* scale = catalogue.Find("ScaleStatefulSet");
  EXPECT_TRUE(scale->disruptive);
  EXPECT_EQ(scale->adapter, "kubernetes");
  EXPECT_EQ(scale->FindParam("replicas")->type, "int");
  EXPECT_TRUE(scale->FindParam("replicas")->required);
  EXPECT_FALSE(catalogue.Find("SetMemberStatus")->FindParam("reason")->required);
  EXPECT_FALSE(catalogue.Find("SetEtcdCondition")->disruptive);
  EXPECT_EQ(catalogue.Find("NoSuchAction"), nullptr);
}

// Issue 23, hazard 4: every write is fenced by what the plan observed, or is
// idempotent by construction, and the catalogue says which.
TEST(ActionCatalogueTest, EveryBundledActionSaysHowItsWritesAreFenced) {
  std::string text = ReadRepoFile("actions/catalogue.yaml");
  CatalogueLoadResult result = LoadActionCatalogue(text, "actions/catalogue.yaml");
  ASSERT_TRUE(result.catalogue) << Messages(result, text);
  for (const ActionDefinition& action : result.catalogue->actions) {
    const std::string kind = action.fencing.substr(0, action.fencing.find(':'));
    EXPECT_TRUE(kind == "observed" || kind == "idempotent" || kind == "none")
        << action.name << ": '" << action.fencing << "'";
    EXPECT_GT(action.fencing.size(), kind.size() + 2) << action.name << " says how";
  }
}

// For each handler of one adapter's folder, whether it gives is_done and perform.
template <typename Context>
std::map<std::string, bool> Complete(const ActionHandlers<Context>& handlers) {
  std::map<std::string, bool> complete;
  for (const auto& [name, handler] : handlers)
    complete[name] = handler.is_done != nullptr && handler.perform != nullptr;
  return complete;
}

// One handler per action (actions/<adapter>/): every action the catalogue
// gives an adapter has one in that adapter's folder, and every handler
// performs an action the catalogue gives its folder's adapter.
TEST(ActionCatalogueTest, EveryActionHasAHandlerInItsAdaptersFolder) {
  std::string text = ReadRepoFile("actions/catalogue.yaml");
  CatalogueLoadResult result = LoadActionCatalogue(text, "actions/catalogue.yaml");
  ASSERT_TRUE(result.catalogue) << Messages(result, text);
  const std::map<std::string, std::map<std::string, bool>> handlers = {
      {"kubernetes", Complete(KubernetesActionHandlers())},
      {"etcd", Complete(EtcdActionHandlers())},
      {"local", Complete(LocalActionHandlers())},
      {"backup-sidecar", Complete(BackupSidecarActionHandlers())},
  };
  for (const ActionDefinition& action : result.catalogue->actions) {
    auto folder = handlers.find(action.adapter);
    ASSERT_NE(folder, handlers.end()) << action.name << ": no folder of handlers for " << action.adapter;
    auto handler = folder->second.find(action.name);
    std::string folder_name = action.adapter;
    std::replace(folder_name.begin(), folder_name.end(), '-', '_');
    ASSERT_NE(handler, folder->second.end())
        << action.name << " has no file in actions/" << folder_name << "/";
    EXPECT_TRUE(handler->second) << action.name << " gives no is_done or no perform";
  }
  for (const auto& [adapter, names] : handlers) {
    EXPECT_FALSE(names.empty()) << adapter;
    for (const auto& [name, complete] : names) {
      const ActionDefinition* action = result.catalogue->Find(name);
      ASSERT_NE(action, nullptr) << name << " has a handler but is not in actions/catalogue.yaml";
      EXPECT_EQ(action->adapter, adapter) << name;
    }
  }
  EXPECT_EQ(FindActionHandler(KubernetesActionHandlers(), "NoSuchAction"), nullptr);
}

TEST(ActionCatalogueTest, ReportsEveryProblemWithItsPosition) {
  const std::string text =
      "apiVersion: ruleplane.dev/v1\n"
      "kind: ActionCatalogue\n"
      "actions:\n"
      "  - name: DeletePod\n"
      "    adapter: kubectl\n"
      "    description: d\n"
      "    idempotency: i\n"
      "    disruptive: maybe\n"
      "    params:\n"
      "      - {name: name, type: text}\n"
      "      - {name: name, type: string, optional: true}\n"
      "  - name: DeletePod\n"
      "    adapter: kubernetes\n"
      "    description: d\n"
      "  - name: delete_pod\n"
      "    adapter: local\n"
      "    description: d\n"
      "    idempotency: i\n";
  CatalogueLoadResult result = LoadActionCatalogue(text, "c.yaml");
  EXPECT_FALSE(result.catalogue);
  EXPECT_EQ(
      Messages(result, text),
      "c.yaml:5:14: error: unknown adapter 'kubectl'; valid adapters: kubernetes, etcd, local, "
      "backup-sidecar\n"
      "    adapter: kubectl\n"
      "             ^\n"
      "c.yaml:8:17: error: expected true or false for 'disruptive', got 'maybe'\n"
      "    disruptive: maybe\n"
      "                ^\n"
      "c.yaml:10:28: error: unknown parameter type 'text'; valid types: string, int, bool, double, duration, "
      "timestamp, list, map, any\n"
      "      - {name: name, type: text}\n"
      "                           ^\n"
      "c.yaml:11:16: error: duplicate parameter 'name' of action 'DeletePod'\n"
      "      - {name: name, type: string, optional: true}\n"
      "               ^\n"
      "c.yaml:11:36: error: unknown key 'optional' in action param; allowed keys: name, type, required, "
      "description\n"
      "      - {name: name, type: string, optional: true}\n"
      "                                   ^\n"
      "c.yaml:12:5: error: missing required key 'idempotency' in action\n"
      "  - name: DeletePod\n"
      "    ^\n"
      "c.yaml:12:11: error: duplicate action 'DeletePod' (first at line 4)\n"
      "  - name: DeletePod\n"
      "          ^\n"
      "c.yaml:15:11: error: invalid action name 'delete_pod': expected UpperCamelCase, e.g. DeletePod\n"
      "  - name: delete_pod\n"
      "          ^\n");
}

TEST(ActionCatalogueTest, WrongHeaderAndYamlSyntax) {
  CatalogueLoadResult wrong_kind =
      LoadActionCatalogue("apiVersion: v1\nkind: DecisionTable\nactions: []\n", "c.yaml");
  ASSERT_EQ(wrong_kind.diagnostics.size(), 2u);
  EXPECT_EQ(wrong_kind.diagnostics[0].message, "unsupported apiVersion 'v1'; expected 'ruleplane.dev/v1'");
  EXPECT_EQ(wrong_kind.diagnostics[1].message,
            "unsupported kind 'DecisionTable'; expected 'ActionCatalogue'");

  CatalogueLoadResult syntax = LoadActionCatalogue("actions: [\n", "c.yaml");
  EXPECT_FALSE(syntax.catalogue);
  ASSERT_EQ(syntax.diagnostics.size(), 1u);
  EXPECT_EQ(syntax.diagnostics[0].message.rfind("invalid YAML: ", 0), 0u);
}

TEST(ActionCatalogueTest, ParamDefaults) {
  CatalogueLoadResult result = LoadActionCatalogue(
      "apiVersion: ruleplane.dev/v1\nkind: ActionCatalogue\nactions:\n"
      "  - {name: A, adapter: etcd, description: d, idempotency: i, params: [{name: p}]}\n",
      "c.yaml");
  ASSERT_TRUE(result.catalogue);
  const ActionParamSpec* param = result.catalogue->Find("A")->FindParam("p");
  EXPECT_EQ(param->type, "any");
  EXPECT_TRUE(param->required);
  EXPECT_FALSE(result.catalogue->Find("A")->disruptive);
}

TEST(ActionCatalogueTest, MergeReportsDuplicatesAcrossFiles) {
  const std::string one =
      "apiVersion: ruleplane.dev/v1\nkind: ActionCatalogue\nactions:\n"
      "  - {name: A, adapter: etcd, description: d, idempotency: i}\n";
  const std::string two =
      "apiVersion: ruleplane.dev/v1\nkind: ActionCatalogue\nactions:\n"
      "  - {name: B, adapter: local, description: d, idempotency: i}\n"
      "  - {name: A, adapter: local, description: d, idempotency: i}\n";
  auto first = LoadActionCatalogue(one, "one.yaml").catalogue;
  auto second = LoadActionCatalogue(two, "two.yaml").catalogue;
  ASSERT_TRUE(first && second);

  CatalogueLoadResult merged = MergeCatalogues({first});
  ASSERT_TRUE(merged.catalogue);
  EXPECT_EQ(merged.catalogue->actions.size(), 1u);

  CatalogueLoadResult clash = MergeCatalogues({first, second});
  EXPECT_FALSE(clash.catalogue);
  ASSERT_EQ(clash.diagnostics.size(), 1u);
  EXPECT_EQ(clash.diagnostics[0].message, "duplicate action 'A' (also defined at one.yaml:4)");
  EXPECT_EQ(clash.diagnostics[0].position.file, "two.yaml");
  EXPECT_EQ(clash.diagnostics[0].position.line, 5);
}

TEST(ActionCatalogueTest, ValueHasParamType) {
  EXPECT_TRUE(ValueHasParamType(Value::Int(1), "int"));
  EXPECT_FALSE(ValueHasParamType(Value::String("1"), "int"));
  EXPECT_TRUE(ValueHasParamType(Value::Int(1), "double"));
  EXPECT_TRUE(ValueHasParamType(Value::Double(1.5), "double"));
  EXPECT_FALSE(ValueHasParamType(Value::Double(1.5), "int"));
  EXPECT_TRUE(ValueHasParamType(Value::String("x"), "string"));
  EXPECT_TRUE(ValueHasParamType(Value::Bool(true), "bool"));
  EXPECT_TRUE(ValueHasParamType(Value::MakeDuration({5}), "duration"));
  EXPECT_FALSE(ValueHasParamType(Value::MakeTimestamp({5}), "duration"));
  EXPECT_TRUE(ValueHasParamType(Value::MakeTimestamp({5}), "timestamp"));
  EXPECT_TRUE(ValueHasParamType(Value::MakeList({}), "list"));
  EXPECT_TRUE(ValueHasParamType(Value::MakeMap({}), "map"));
  EXPECT_TRUE(ValueHasParamType(Value::Null(), "any"));
  EXPECT_FALSE(ValueHasParamType(Value::Null(), "string"));
  EXPECT_FALSE(ValueHasParamType(Value::Int(1), "integer"));
}

}  // namespace
}  // namespace ruleplane
