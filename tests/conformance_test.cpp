// The conformance check (engine/verify/conformance.h): a rule set that plans
// an action no adapter of its process executes, or reads a snapshot path its
// process's observer does not write, is found, at the line that does it; the
// shipped rule sets conform in every process (cli/process_profiles.h).
#include "engine/verify/conformance.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cli/process_profiles.h"
#include "cli/rule_library.h"
#include "controller/cluster_adapters.h"
#include "engine/common/json_value.h"
#include "engine/rule_file/rule_loader.h"
#include "tests/run_ruleplane.h"
#include "tests/support/source_paths.h"

namespace ruleplane {
namespace {

std::shared_ptr<const ActionCatalogue> Catalogue() {
  std::ifstream file(std::string(testing::SourceDir()) + "/actions/catalogue.yaml");
  std::stringstream text;
  text << file.rdbuf();
  auto loaded = LoadActionCatalogue(text.str(), "actions/catalogue.yaml");
  EXPECT_TRUE(loaded.catalogue) << (loaded.diagnostics.empty() ? "" : loaded.diagnostics[0].message);
  return loaded.catalogue;
}

// A cluster table that defragments the members the snapshot's `bloated` lists.
constexpr const char* kDefragmentingTable = R"(apiVersion: ruleplane.dev/v1
kind: DecisionTable
metadata:
  name: fixture-defragment
  version: 1.0.0
spec:
  subject: EtcdCluster
  hitPolicy: FIRST
  facts:
    - name: bloated
      expr: '"bloated" in snapshot ? snapshot.bloated : []'
    - name: count
      expr: bloated.size()
      domain: int [0, 3]
  rules:
    - id: defragment
      when:
        count: "> 0"
      then:
        - action: DefragmentMember
          target: snapshot.etcd.metadata.name
          params:
            name: snapshot.etcd.metadata.name
            endpoint: '"http://127.0.0.1:2379"'
    - id: nothing
      then: []
)";

std::shared_ptr<const CompiledRuleSet> Compile(const std::string& text, const ActionCatalogue& catalogue) {
  auto loaded = LoadRuleFile(text, "fixture.yaml", &catalogue);
  EXPECT_TRUE(loaded.rule_set) << (loaded.diagnostics.empty() ? "" : loaded.diagnostics[0].message);
  if (!loaded.rule_set) return nullptr;
  auto compiled = CompiledRuleSet::Compile(loaded.rule_set);
  EXPECT_TRUE(compiled.ok());
  return compiled.ok() ? *compiled : nullptr;
}

ProcessProfile Profile(std::vector<std::string> kinds, const char* shape) {
  auto observed = ParseObservedShape(shape);
  EXPECT_TRUE(observed.ok()) << observed.error().message;
  return {"a controller", "EtcdCluster", std::move(kinds), observed.ok() ? *observed : ObservedShape{}};
}

TEST(Conformance, AnActionWithoutAnAdapterAndAnUnobservedPathAreFoundWhereTheTableSaysThem) {
  auto catalogue = Catalogue();
  auto compiled = Compile(kDefragmentingTable, *catalogue);
  ASSERT_TRUE(compiled);
  const auto findings = CheckConformance(*compiled, *catalogue, Profile({"kubernetes"}, "{kind, etcd: *}"));
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(
      findings[0].message,
      "fixture-defragment@1.0.0 plans DefragmentMember (rule defragment), which needs the etcd adapter; a "
      "controller executes only with kubernetes");
  EXPECT_EQ(findings[0].position.line, 20);
  EXPECT_EQ(findings[1].message,
            "fixture-defragment@1.0.0 reads snapshot.bloated, which a controller's observer does not write");
  EXPECT_EQ(findings[1].position.file, "fixture.yaml");
  EXPECT_EQ(findings[1].position.line, 11);
}

TEST(Conformance, AProcessWithTheAdapterAndTheObservationConformsAndOtherSubjectsAreNotItsConcern) {
  auto catalogue = Catalogue();
  auto compiled = Compile(kDefragmentingTable, *catalogue);
  ASSERT_TRUE(compiled);
  EXPECT_TRUE(
      CheckConformance(*compiled, *catalogue, Profile({"kubernetes", "etcd"}, "{etcd: *, bloated: [*]}"))
          .empty());
  // An open object: every path below it is observed.
  EXPECT_TRUE(CheckConformance(*compiled, *catalogue, Profile({"etcd"}, "*")).empty());
  ProcessProfile member_init = Profile({}, "{}");
  member_init.subject = "EtcdMemberInit";
  EXPECT_TRUE(CheckConformance(*compiled, *catalogue, member_init).empty());
}

TEST(Conformance, EveryShippedRuleSetConformsInTheProcessThatLoadsIt) {
  std::stringstream err;
  auto library = cli::LoadRuleLibrary({std::string(testing::SourceDir()) + "/rules"}, err);
  ASSERT_TRUE(library) << err.str();
  int checked = 0;
  for (const cli::RuleFile& file : library->files) {
    ASSERT_TRUE(file.rule_set) << file.path;
    auto compiled = CompiledRuleSet::Compile(file.rule_set);
    ASSERT_TRUE(compiled.ok()) << file.path;
    for (const ProcessProfile& profile : cli::ProcessProfiles()) {
      if (profile.subject != file.rule_set->subject) continue;
      ++checked;
      for (const ConformanceFinding& finding : CheckConformance(**compiled, *library->catalogue, profile))
        ADD_FAILURE() << finding.position.file << ":" << finding.position.line << ": " << finding.message;
    }
  }
  EXPECT_EQ(checked, static_cast<int>(library->files.size())) << "a rule set that no process loads";
}

// The controller defragments (its etcd adapter); nobody observes `bloated`.
TEST(Conformance, LintNamesTheUnobservedPathAtItsLineAndExitsOne) {
  const auto run = testing_support::Ruleplane(
      "lint " + testing_support::WriteTemp("defragmenting.yaml", kDefragmentingTable));
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(
      run.out.find("defragmenting.yaml:11:15: error: fixture-defragment@1.0.0 reads snapshot.bloated, which "
                   "controller's observer does not write"),
      std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("1 file checked, 1 error"), std::string::npos) << run.out;
}

TEST(Conformance, TheControllersAdaptersAreTheKindsItsProfileSays) {
  KubeClient client(KubeConfig{});
  auto snapshot =
      SnapshotFromValue(Value::MakeMap({{Value::String("apiVersion"), Value::String("ruleplane.dev/v1")},
                                        {Value::String("kind"), Value::String("EtcdClusterSnapshot")},
                                        {Value::String("observedAt"), Value::String("2026-11-27T00:00:00Z")},
                                        {Value::String("etcd"), Value::MakeMap({})}}));
  ASSERT_TRUE(snapshot.ok()) << snapshot.error().message;
  const MemberEndpoints members;
  EXPECT_EQ(ClusterAdapters(client, *snapshot, &members).set().kinds(), ClusterAdapterKinds());
}

TEST(ObservedShape, ParsesTheDeclarationsAndSaysWhereOneIsMalformed) {
  auto shape = ParseObservedShape("{a, b?: *, c: [{d}], e: {}}");
  ASSERT_TRUE(shape.ok()) << shape.error().message;
  EXPECT_TRUE(shape->fields.at("b").open);
  EXPECT_TRUE(shape->fields.at("b").optional);
  EXPECT_FALSE(shape->fields.at("a").optional);
  ASSERT_TRUE(shape->fields.at("c").element);
  EXPECT_EQ(shape->fields.at("c").element->fields.count("d"), 1u);
  auto broken = ParseObservedShape("{a, b: [*}");
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.error().message, "observed shape, offset 9: expected ']'");
  EXPECT_FALSE(ParseObservedShape("{a} b").ok());
}

TEST(ObservedShape, MismatchesAreSaidBothWaysAndNullMatchesAnything) {
  auto shape = ParseObservedShape("{kind, etcd: *, leases: [{name}], budget?: *}");
  ASSERT_TRUE(shape.ok());
  auto document =
      ParseJson(R"({"kind": "K", "etcd": {"any": 1}, "leases": [{"name": "a"}, {"name": "b", "x": 1}],
                                "extra": true})");
  ASSERT_TRUE(document.ok());
  EXPECT_EQ(ShapeMismatches(*document, *shape),
            (std::vector<std::string>{"snapshot.extra is written but not declared",
                                      "snapshot.leases[].x is written but not declared"}));
  auto nulls = ParseJson(R"({"kind": null, "etcd": null, "leases": null})");
  ASSERT_TRUE(nulls.ok());
  EXPECT_TRUE(ShapeMismatches(*nulls, *shape).empty());
  auto missing = ParseJson(R"({"etcd": {}, "leases": []})");
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(ShapeMismatches(*missing, *shape),
            std::vector<std::string>{"snapshot.kind is declared but not written"});
}

}  // namespace
}  // namespace ruleplane
