// SnapshotProjection builds only what rule sets can read. The test that
// matters is the differential one: every bundled rule set, on every example
// snapshot and every snapshot its own tests use, plans exactly the same from
// the projected snapshot as from the whole one.
#include "engine/plan/snapshot_projection.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "engine/common/json_value.h"
#include "engine/expr/access_tree.h"
#include "engine/rule_file/action_catalogue.h"
#include "engine/rule_file/rule_loader.h"
#include "tests/support/source_paths.h"

namespace ruleplane {
namespace {

namespace fs = std::filesystem;
using RuleSets = std::vector<std::shared_ptr<const CompiledRuleSet>>;

using testing::kSourceDir;

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Bundle {
  std::shared_ptr<const ActionCatalogue> catalogue;
  std::map<std::string, RuleSets> by_subject;
  std::vector<std::pair<std::string, std::string>> snapshots;  // name, JSON text
};

const Bundle& GetBundle() {
  static const Bundle bundle = [] {
    Bundle b;
    auto catalogue = LoadActionCatalogue(ReadText(kSourceDir / "actions/catalogue.yaml"), "catalogue.yaml");
    EXPECT_TRUE(catalogue.catalogue);
    b.catalogue = catalogue.catalogue;
    for (const auto& entry : fs::recursive_directory_iterator(kSourceDir / "rules")) {
      if (entry.path().extension() != ".yaml") continue;
      auto loaded = LoadRuleFile(ReadText(entry.path()), entry.path().string(), b.catalogue.get());
      EXPECT_TRUE(loaded.rule_set) << entry.path();
      if (!loaded.rule_set) continue;
      auto compiled = CompiledRuleSet::Compile(loaded.rule_set);
      EXPECT_TRUE(compiled.ok()) << entry.path();
      if (!compiled.ok()) continue;
      b.by_subject[loaded.rule_set->subject].push_back(*compiled);
      for (const RuleTest& test : loaded.rule_set->tests) {
        const std::string name = entry.path().filename().string() + ": " + test.name;
        if (test.snapshot) b.snapshots.emplace_back(name, FormatJson(*test.snapshot, 2));
        if (!test.snapshot_file.empty()) {
          b.snapshots.emplace_back(name, ReadText(entry.path().parent_path() / test.snapshot_file));
        }
      }
    }
    for (const auto& entry : fs::directory_iterator(kSourceDir / "examples/snapshots")) {
      if (entry.path().extension() == ".json") {
        b.snapshots.emplace_back(entry.path().filename().string(), ReadText(entry.path()));
      }
    }
    return b;
  }();
  return bundle;
}

// The rule sets `whole` is planned with: every bundled one of its subject.
const RuleSets* RuleSetsFor(const Snapshot& whole) {
  const auto it = GetBundle().by_subject.find(whole.subject());
  return it == GetBundle().by_subject.end() ? nullptr : &it->second;
}

TEST(SnapshotProjection, EveryBundledRuleSetPlansTheSameFromTheProjection) {
  const Bundle& bundle = GetBundle();
  int compared = 0, smaller = 0;
  for (const auto& [name, text] : bundle.snapshots) {
    auto whole = ParseSnapshot(text);
    ASSERT_TRUE(whole.ok()) << name << ": " << whole.error().message;
    const RuleSets* rule_sets = RuleSetsFor(*whole);
    if (rule_sets == nullptr) continue;
    // Each rule set alone, and all of its subject together.
    std::vector<RuleSets> groups = {*rule_sets};
    for (const auto& one : *rule_sets) groups.push_back({one});
    for (const RuleSets& group : groups) {
      const SnapshotProjection projection = SnapshotProjection::For(group);
      auto projected = projection.Parse(text);
      ASSERT_TRUE(projected.ok()) << name << ": " << projected.error().message;
      EXPECT_EQ(projected->digest, whole->digest);
      if (FormatJson(projected->document).size() < FormatJson(whole->document).size()) ++smaller;
      auto from_whole = MakePlan(group, *whole, {}, bundle.catalogue.get());
      auto from_projection = MakePlan(group, *projected, {}, bundle.catalogue.get());
      ASSERT_TRUE(from_whole.ok() && from_projection.ok()) << name;
      ASSERT_EQ(from_whole->rule_sets.size(), from_projection->rule_sets.size());
      for (size_t i = 0; i < from_whole->rule_sets.size(); ++i) {
        // An error is an error either way; its message may quote a value only partly built.
        EXPECT_EQ(from_whole->rule_sets[i].error.has_value(), from_projection->rule_sets[i].error.has_value())
            << name << ", " << from_whole->rule_sets[i].name;
        if (from_whole->rule_sets[i].error) {
          from_whole->rule_sets[i].error.reset();
          from_projection->rule_sets[i].error.reset();
        }
      }
      EXPECT_EQ(FormatJson(PlanToValue(*from_projection), 2), FormatJson(PlanToValue(*from_whole), 2))
          << name;
      ++compared;
    }
  }
  // Every example, and every test snapshot of every rule file, of each subject.
  EXPECT_GT(compared, 500);
  EXPECT_GT(smaller, compared / 2);
}

TEST(SnapshotProjection, PlanTextGivesTheWholeSnapshotsMessages) {
  const Bundle& bundle = GetBundle();
  const RuleSets& rule_sets = bundle.by_subject.at("EtcdCluster");
  const SnapshotProjection projection = SnapshotProjection::For(rule_sets);
  auto document = ParseJson(ReadText(kSourceDir / "examples/snapshots/minority-not-ready.json"));
  ASSERT_TRUE(document.ok());
  // A member entry without a status: the rule sets name it in their errors.
  Value::Map root = document->map_value();
  for (auto& [key, etcd] : root) {
    if (key.string_value() != "etcd") continue;
    Value::Map etcd_map = etcd.map_value();
    for (auto& [field, status] : etcd_map) {
      if (field.string_value() != "status") continue;
      Value::Map status_map = status.map_value();
      for (auto& [name, members] : status_map) {
        if (name.string_value() == "members") members = Value::MakeList({Value::MakeMap({})});
      }
      status = Value::MakeMap(std::move(status_map));
    }
    etcd = Value::MakeMap(std::move(etcd_map));
  }
  const std::string text = FormatJson(Value::MakeMap(std::move(root)));
  auto whole = ParseSnapshot(text);
  ASSERT_TRUE(whole.ok());
  auto expected = MakePlan(rule_sets, *whole, {}, bundle.catalogue.get());
  auto plan = PlanText(projection, rule_sets, text, {}, bundle.catalogue.get());
  ASSERT_TRUE(expected.ok() && plan.ok());
  ASSERT_TRUE(expected->has_error());
  EXPECT_EQ(FormatJson(PlanToValue(*plan), 2), FormatJson(PlanToValue(*expected), 2));
}

TEST(SnapshotProjection, BadTextGetsParseSnapshotsErrors) {
  const SnapshotProjection projection = SnapshotProjection::For({});
  for (const std::string& text : {std::string(R"({"apiVersion": "ruleplane.dev/v1",)"),
                                  std::string(R"({"apiVersion": "ruleplane.dev/v1", "kind": 3})"),
                                  std::string(R"({"a": 123456789012345678901234567890})"),
                                  std::string(600, '[') + std::string(600, ']')}) {
    auto projected = projection.Parse(text);
    auto whole = ParseSnapshot(text);
    ASSERT_FALSE(whole.ok());
    ASSERT_FALSE(projected.ok()) << text.substr(0, 40);
    EXPECT_EQ(projected.error().message, whole.error().message);
  }
}

TEST(SnapshotProjection, DuplicateKeysKeepTheLastValueAtTheFirstPlace) {
  const std::string text =
      R"({"apiVersion": "ruleplane.dev/v1", "kind": "EtcdClusterSnapshot", "observedAt": "2024-05-01T10:00:00Z",
          "params": {"a": 1, "b": 2, "a": 3}})";
  auto projected = SnapshotProjection::For({}).Parse(text);
  auto whole = ParseSnapshot(text);
  ASSERT_TRUE(projected.ok() && whole.ok());
  EXPECT_EQ(FormatJson(projected->params), R"({"a":3,"b":2})");
  EXPECT_EQ(FormatJson(projected->params), FormatJson(whole->params));
}

// What AccessAnalysis records for one expression over `snapshot`.
std::string AccessOf(const std::string& text) {
  expr::Environment env;
  env.Declare("snapshot", 0);
  auto program = expr::Compile(text, env);
  EXPECT_TRUE(program.ok()) << text;
  if (!program.ok()) return "";
  expr::AccessTree snapshot;
  expr::AccessAnalysis analysis;
  analysis.Bind(0, {&snapshot});
  expr::AccessAnalysis::ReadWhole(analysis.Visit(**program));
  analysis.Finish();
  snapshot.Normalize();
  std::string shape;
  std::function<void(const expr::AccessTree&)> render = [&](const expr::AccessTree& tree) {
    if (tree.whole) {
      shape += "*";
      return;
    }
    shape += "{";
    for (const auto& [name, child] : tree.fields) {
      shape += name + ":";
      render(child);
      shape += " ";
    }
    if (tree.element) {
      shape += "[]:";
      render(*tree.element);
      shape += " ";
    }
    if (tree.every_key) shape += "...";
    shape += "}";
  };
  render(snapshot);
  return shape;
}

TEST(AccessAnalysis, RecordsWhatAnExpressionReads) {
  EXPECT_EQ(AccessOf("snapshot.a.b + 1"), "{a:{b:* } }");
  EXPECT_EQ(AccessOf(R"("k" in snapshot.m)"), "{m:{k:{} } }");
  EXPECT_EQ(AccessOf("size(snapshot.m)"), "{m:{...} }");
  EXPECT_EQ(AccessOf("snapshot.m == {}"), "{m:* }");
  EXPECT_EQ(AccessOf(R"(snapshot.m[snapshot.k].x)"), "{k:* m:{[]:{x:* } ...} }");
  EXPECT_EQ(AccessOf("snapshot.l.filter(e, e.ok).size()"), "{l:{[]:{ok:* } ...} }");
  // map() builds a new list: what is read of its elements is read of the transform's values.
  EXPECT_EQ(AccessOf("snapshot.l.map(e, e.spec).map(s, s.n)"), "{l:{[]:{spec:{n:* } } ...} }");
  EXPECT_EQ(AccessOf("snapshot.l.map(e, e.spec)[0]"), "{l:{[]:{spec:* } ...} }");
  EXPECT_EQ(AccessOf("true ? snapshot.a : snapshot.b"), "{a:* b:* }");
  EXPECT_EQ(AccessOf("snapshot.s.startsWith(snapshot.t)"), "{s:* t:* }");
}

}  // namespace
}  // namespace ruleplane
