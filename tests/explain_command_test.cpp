// ruleplane explain, run as a user runs it: each fact in one line, --fact for
// one whole value, -o json for everything, and unknown rules and facts refused
// before anything is printed.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "engine/common/json_value.h"
#include "tests/run_ruleplane.h"

namespace {

using namespace ruleplane::testing_support;
using ruleplane::FormatJson;
using ruleplane::ParseJson;
using ruleplane::Value;

constexpr const char* kQuorumLost = "examples/snapshots/quorum-lost.json";

size_t LongestLine(const std::string& text) {
  std::istringstream lines(text);
  size_t longest = 0;
  for (std::string line; std::getline(lines, line);) longest = std::max(longest, line.size());
  return longest;
}

TEST(ExplainCommand, FactsOfKubernetesObjectsTakeOneShortLineEach) {
  CommandResult run = Ruleplane(std::string("explain ") + kQuorumLost);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(Contains(run.out, "    members = [3 objects: etcd-main-0, etcd-main-1, etcd-main-2]\n"))
      << run.out;
  EXPECT_TRUE(Contains(run.out, "    pods = [3 objects: etcd-main-0, etcd-main-1, etcd-main-2]\n"))
      << run.out;
  EXPECT_TRUE(Contains(run.out, "    conditions = [3 objects: Ready, AllMembersReady, BackupReady]\n"))
      << run.out;
  EXPECT_TRUE(Contains(run.out, "    etcdStatus = {13 keys: observedGeneration, etcd, conditions, "))
      << run.out;
  EXPECT_TRUE(Contains(run.out, "    memberNames = [\"etcd-main-0\", \"etcd-main-1\", \"etcd-main-2\"]\n"))
      << run.out;
  EXPECT_TRUE(Contains(run.out, "  rule quorum-lost (line ")) << run.out;
  EXPECT_LE(LongestLine(run.out), 130u);
  EXPECT_LT(run.out.size(), 20000u);
}

TEST(ExplainCommand, LongValuesAreCutToOneLine) {
  std::string items, numbers, keys;
  for (int i = 0; i < 50; ++i) {
    items += std::string(i ? ", " : "") + R"({"metadata": {"name": "object-)" + std::to_string(i) + R"("}})";
    numbers += std::string(i ? ", " : "") + std::to_string(1000 + i);
    keys += std::string(i ? ", " : "") + "\"key" + std::to_string(i) + "\": " + std::to_string(i);
  }
  const std::string snapshot =
      WriteTemp("snapshot.json", R"({"apiVersion": "ruleplane.dev/v1", "kind": "ThingSnapshot",
    "observedAt": "2024-05-01T10:00:00Z", "text": ")" +
                                     std::string(300, 'x') + R"(", "items": [)" + items +
                                     R"(], "numbers": [)" + numbers + R"(], "config": {)" + keys + "}}");
  const std::string rules = WriteTemp("rules.yaml", R"(apiVersion: ruleplane.dev/v1
kind: DecisionTable
metadata: {name: things, version: 1.0.0}
spec:
  subject: Thing
  hitPolicy: FIRST
  facts:
    - {name: text, expr: snapshot.text}
    - {name: items, expr: snapshot.items}
    - {name: numbers, expr: snapshot.numbers}
    - {name: config, expr: snapshot.config}
  rules:
    - id: many
      when: {}
      condition: numbers.size() > 10
)");
  CommandResult run = Ruleplane("explain --rules " + rules + " " + snapshot);
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  EXPECT_TRUE(Contains(run.out, "    text = \"xxxx")) << run.out;
  EXPECT_TRUE(Contains(run.out, "xxx...\n")) << run.out;
  EXPECT_TRUE(Contains(run.out, "    items = [50 objects: object-0, object-1, ")) << run.out;
  EXPECT_TRUE(Contains(run.out, "    numbers = [50 items: 1000, 1001, ")) << run.out;
  EXPECT_TRUE(Contains(run.out, "    config = {50 keys: key0, key1, ")) << run.out;
  EXPECT_TRUE(Contains(run.out, ", ...]\n")) << run.out;
  EXPECT_TRUE(Contains(run.out, ", ...}\n")) << run.out;
  EXPECT_LE(LongestLine(run.out), 130u) << run.out;
}

TEST(ExplainCommand, FactOptionPrintsOneWholeValueAsJson) {
  CommandResult run = Ruleplane(std::string("explain ") + kQuorumLost + " --fact members");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto members = ParseJson(run.out);
  ASSERT_TRUE(members.ok()) << run.out;
  ASSERT_TRUE(members->is_list());
  ASSERT_EQ(members->list_value().size(), 3u);
  EXPECT_EQ(members->list_value()[2].Find("name")->string_value(), "etcd-main-2");
  EXPECT_TRUE(members->list_value()[0].Find("lastTransitionTime") != nullptr) << run.out;

  CommandResult yaml = Ruleplane(std::string("explain ") + kQuorumLost + " --fact clusterSize -o yaml");
  ASSERT_EQ(yaml.exit_code, 0) << yaml.err;
  EXPECT_EQ(yaml.out, "3\n");
}

TEST(ExplainCommand, JsonOutputHasEveryFactWholeAndTheTrace) {
  CommandResult run = Ruleplane(std::string("explain ") + kQuorumLost + " -o json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto document = ParseJson(run.out);
  ASSERT_TRUE(document.ok()) << document.error().message;
  EXPECT_EQ(document->Find("snapshot")->Find("observedAt")->string_value(), "2024-05-01T10:00:00Z");
  const Value& rule_sets = *document->Find("ruleSets");
  ASSERT_GE(rule_sets.list_value().size(), 2u);
  // The components rule set comes first by name; with a StatefulSet it decides nothing, and it says so.
  const Value& components = rule_sets.list_value()[0];
  EXPECT_EQ(components.Find("name")->string_value(), "etcd-druid-components");
  EXPECT_EQ(components.Find("selected")->list_value().size(), 0u);
  const Value& status = rule_sets.list_value()[1];
  EXPECT_EQ(status.Find("name")->string_value(), "etcd-druid-status");
  EXPECT_EQ(status.Find("hitPolicy")->string_value(), "FIRST");
  EXPECT_EQ(status.Find("facts")->Find("members")->list_value().size(), 3u);
  EXPECT_EQ(status.Find("facts")->Find("pods")->list_value()[0].Find("kind")->string_value(), "Pod");
  EXPECT_EQ(status.Find("selected")->list_value()[0].string_value(), "quorum-lost");
  bool found = false;
  for (const Value& rule : status.Find("rules")->list_value()) {
    if (rule.Find("id")->string_value() != "quorum-lost") continue;
    found = true;
    EXPECT_EQ(rule.Find("status")->string_value(), "selected");
    const Value& cell = rule.Find("cells")->list_value()[0];
    EXPECT_EQ(cell.Find("fact")->string_value(), "clusterSize");
    EXPECT_EQ(cell.Find("cell")->string_value(), "> 0");
    EXPECT_EQ(cell.Find("value")->int_value(), 3);
    EXPECT_TRUE(cell.Find("passed")->bool_value());
  }
  EXPECT_TRUE(found) << run.out;

  CommandResult one = Ruleplane(std::string("explain ") + kQuorumLost + " -o json --rule quorum-lost");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  auto only = ParseJson(one.out);
  ASSERT_TRUE(only.ok());
  const Value::List& sets = only->Find("ruleSets")->list_value();
  ASSERT_EQ(sets.size(), 1u);
  ASSERT_EQ(sets[0].Find("rules")->list_value().size(), 1u);
}

TEST(ExplainCommand, UnknownRuleOrFactFailsBeforePrintingAnything) {
  CommandResult rule = Ruleplane(std::string("explain ") + kQuorumLost + " --rule no-such-rule");
  EXPECT_EQ(rule.exit_code, 2);
  EXPECT_EQ(rule.out, "");
  EXPECT_TRUE(Contains(
      rule.err,
      "no rule 'no-such-rule' in the rule files for EtcdClusterSnapshot (etcd-druid-components@1.2.0, "
      "etcd-druid-status@"))
      << rule.err;
  CommandResult fact = Ruleplane(std::string("explain ") + kQuorumLost + " --fact no-such-fact -o json");
  EXPECT_EQ(fact.exit_code, 2);
  EXPECT_EQ(fact.out, "");
  EXPECT_TRUE(Contains(fact.err, "no fact 'no-such-fact'")) << fact.err;
  CommandResult both = Ruleplane(std::string("explain ") + kQuorumLost + " --rule quorum-lost --fact n");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_EQ(both.out, "");
}

TEST(ExplainCommand, HelpDescribesTheOptions) {
  CommandResult run = Ruleplane("explain --help");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_TRUE(Contains(run.out, "--fact NAME")) << run.out;
  EXPECT_TRUE(Contains(run.out, "-o json|yaml")) << run.out;
  CommandResult usage = Ruleplane("help");
  EXPECT_TRUE(Contains(usage.out, "[--rule ID | --fact NAME] [-o table|json|yaml]")) << usage.out;
}

// Before the StatefulSet exists, the rule sets with an appliesWhen on it
// decide nothing (no "no such key" error); the components rules create it.
TEST(ExplainCommand, RuleSetsThatDoNotApplySayWhyAndPlanNothing) {
  const std::string snapshot = WriteTemp(
      "no-statefulset.json",
      R"({"apiVersion":"ruleplane.dev/v1","kind":"EtcdClusterSnapshot","observedAt":"2024-05-01T10:00:00Z",)"
      R"("etcd":{"metadata":{"name":"etcd-main","namespace":"default","uid":"7e5c1a2b-0000"},)"
      R"("spec":{"replicas":3}},"leases":[],"pods":[]})");
  CommandResult explained = Ruleplane("explain " + snapshot);
  ASSERT_EQ(explained.exit_code, 0) << explained.err;
  EXPECT_TRUE(
      Contains(explained.out,
               "etcd-druid-status@1.5.0 (rules/etcd-druid/status.yaml), hit policy FIRST\n"
               "  does not apply: appliesWhen \"statefulSet\" in snapshot && snapshot.statefulSet != null "
               "is false\n"))
      << explained.out;
  CommandResult fact = Ruleplane("explain " + snapshot + " --rules etcd-druid-status@1 --fact n");
  EXPECT_EQ(fact.exit_code, 2);
  EXPECT_TRUE(Contains(fact.err, "does not apply to this snapshot")) << fact.err;

  CommandResult planned = Ruleplane("plan " + snapshot + " -o json");
  ASSERT_EQ(planned.exit_code, 0) << planned.err;
  auto plan = ParseJson(planned.out);
  ASSERT_TRUE(plan.ok()) << planned.out;
  std::vector<std::string> not_applying, actions;
  for (const Value& rule_set : plan->Find("ruleSets")->list_value()) {
    EXPECT_EQ(rule_set.Find("error"), nullptr) << FormatJson(rule_set);
    if (rule_set.Find("applies") != nullptr) not_applying.push_back(rule_set.Find("name")->string_value());
  }
  for (const Value& step : plan->Find("steps")->list_value())
    actions.push_back(step.Find("action")->string_value());
  EXPECT_EQ(not_applying, (std::vector<std::string>{"etcd-druid-status", "etcd-druid-status-defragmentation",
                                                    "etcd-druid-status-maintenance"}));
  EXPECT_EQ(actions, (std::vector<std::string>{"AddEtcdFinalizer", "ApplyEtcdConfigMap", "ApplyEtcdServices",
                                               "ApplyEtcdMemberAccess", "CreateMemberLease",
                                               "CreateMemberLease", "CreateMemberLease", "SetClusterSize",
                                               "CreateStatefulSet", "SetPdbMinAvailable"}));
}

}  // namespace
