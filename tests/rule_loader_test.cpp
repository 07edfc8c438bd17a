#include "engine/rule_file/rule_loader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/common/semver.h"
#include "engine/common/sha256.h"
#include "engine/rule_file/cell_parser.h"
#include "engine/rule_file/diagnostics.h"
#include "tests/support/source_paths.h"

namespace ruleplane {
namespace {

namespace fs = std::filesystem;

using testing::kSourceDir;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::shared_ptr<const ActionCatalogue> RepoCatalogue() {
  static const std::shared_ptr<const ActionCatalogue> catalogue = [] {
    CatalogueLoadResult loaded =
        LoadActionCatalogue(ReadFile(kSourceDir / "actions/catalogue.yaml"), "actions/catalogue.yaml");
    return loaded.catalogue;
  }();
  return catalogue;
}

std::string FormatAll(const RuleLoadResult& result, std::string_view text) {
  std::string out;
  for (const Diagnostic& diagnostic : result.diagnostics) out += FormatDiagnostic(diagnostic, text);
  return out;
}

// A valid rule file to which each test appends or substitutes a little.
std::string RuleFile(const std::string& spec_body) {
  return "apiVersion: ruleplane.dev/v1\n"
         "kind: DecisionTable\n"
         "metadata:\n"
         "  name: test-table\n"
         "  version: 1.0.0\n"
         "spec:\n"
         "  subject: EtcdCluster\n"
         "  hitPolicy: FIRST\n" +
         spec_body;
}

const char kFactsAndParams[] =
    "  params:\n"
    "    - name: grace\n"
    "      type: duration\n"
    "      default: 5m\n"
    "  facts:\n"
    "    - name: n\n"
    "      expr: snapshot.etcd.spec.replicas\n"
    "    - name: notReady\n"
    "      expr: size(snapshot.etcd.status.members)\n"
    "    - name: names\n"
    "      expr: '[\"a\", \"b\"]'\n";

RuleLoadResult Load(const std::string& text) { return LoadRuleFile(text, "t.yaml", RepoCatalogue().get()); }

// The first ```yaml block after `heading` in rules/README.md.
std::string ReadmeExample(std::string_view heading) {
  std::string readme = ReadFile(kSourceDir / "rules/README.md");
  size_t at = readme.find(heading);
  if (at == std::string::npos) return "";
  size_t start = readme.find("```yaml\n", at);
  if (start == std::string::npos) return "";
  start += 8;
  return readme.substr(start, readme.find("```\n", start) - start);
}

TEST(RuleLoaderTest, ReadmeExampleLoadsWithoutDiagnostics) {
  std::string text = ReadmeExample("## A complete small example");
  ASSERT_FALSE(text.empty());
  RuleLoadResult result = LoadRuleFile(text, "example.yaml", RepoCatalogue().get());
  ASSERT_TRUE(result.rule_set) << FormatAll(result, text);
  EXPECT_TRUE(result.diagnostics.empty());
  const RuleSet& rules = *result.rule_set;
  EXPECT_EQ(rules.id(), "etcd-druid-quorum@1.0.0");
  EXPECT_EQ(rules.subject, "EtcdCluster");
  EXPECT_EQ(rules.hit_policy, HitPolicy::kFirst);
  EXPECT_EQ(rules.digest, "sha256:" + Sha256Hex(text));
  EXPECT_EQ(rules.file, "example.yaml");

  ASSERT_EQ(rules.params.size(), 1u);
  EXPECT_EQ(rules.params[0].type, ParamType::kDuration);
  EXPECT_EQ(rules.params[0].default_value.duration_value().nanos, int64_t{300} * 1000000000);

  ASSERT_EQ(rules.facts.size(), 3u);
  EXPECT_EQ(rules.facts[0].domain.kind, Domain::Kind::kInt);
  EXPECT_EQ(rules.facts[0].domain.low->program->constant()->int_value(), 0);
  EXPECT_EQ(rules.facts[0].domain.high->program->constant()->int_value(), 7);
  EXPECT_EQ(rules.facts[1].domain.kind, Domain::Kind::kInt);
  EXPECT_EQ(rules.facts[1].domain.high->text, "n");
  EXPECT_EQ(rules.facts[1].expression.position.line, 21);
  EXPECT_EQ(rules.facts[1].expression.position.column, 13);
  ASSERT_EQ(rules.constraints.size(), 1u);

  ASSERT_EQ(rules.rules.size(), 2u);
  const Rule& quorum_lost = rules.rules[0];
  EXPECT_EQ(quorum_lost.id, "quorum-lost");
  ASSERT_EQ(quorum_lost.cells.size(), 2u);
  EXPECT_EQ(quorum_lost.cells[0].kind, Cell::Kind::kCompare);
  EXPECT_EQ(quorum_lost.cells[0].op, CompareOp::kGt);
  EXPECT_EQ(quorum_lost.cells[0].operand->text, "0");
  EXPECT_EQ(quorum_lost.cells[1].kind, Cell::Kind::kRange);
  EXPECT_TRUE(quorum_lost.cells[1].low_inclusive);
  EXPECT_FALSE(quorum_lost.cells[1].high_inclusive);
  EXPECT_EQ(quorum_lost.cells[1].fact, 1);
  ASSERT_TRUE(quorum_lost.condition);
  ASSERT_EQ(quorum_lost.then.size(), 2u);
  EXPECT_EQ(quorum_lost.then[0].action, "ScaleStatefulSet");
  EXPECT_FALSE(quorum_lost.then[0].for_each);
  EXPECT_EQ(quorum_lost.then[0].params[0].value.program->constant()->int_value(), 0);
  EXPECT_EQ(quorum_lost.then[1].as, "m");
  ASSERT_TRUE(quorum_lost.then[1].for_each);

  ASSERT_EQ(rules.tests.size(), 2u);
  const RuleTest& inline_test = rules.tests[0];
  ASSERT_TRUE(inline_test.snapshot);
  EXPECT_EQ(inline_test.snapshot->Find("etcd")->Find("spec")->Find("replicas")->int_value(), 3);
  EXPECT_EQ(*inline_test.expect_rules, std::vector<std::string>{"quorum-lost"});
  ASSERT_EQ(inline_test.expect_steps->size(), 3u);
  EXPECT_EQ((*inline_test.expect_steps)[0].target, "etcd-main");
  EXPECT_EQ(*(*inline_test.expect_steps)[0].params->Find("replicas"), Value::Int(0));
  const RuleTest& file_test = rules.tests[1];
  EXPECT_EQ(file_test.snapshot_file, "../../examples/snapshots/healthy-3.json");
  ASSERT_EQ(file_test.params.size(), 1u);
  EXPECT_EQ(file_test.params[0].second.duration_value().nanos, int64_t{600} * 1000000000);
  EXPECT_TRUE(file_test.expect_steps->empty());
}

TEST(RuleLoaderTest, CellKinds) {
  std::string text = RuleFile(std::string(kFactsAndParams) +
                              "  rules:\n"
                              "    - id: r1\n"
                              "      when:\n"
                              "        n: 3\n"
                              "        notReady: 2 * notReady < n\n"
                              "        names: in [[\"a\", \"b\"]]\n"
                              "    - id: r2\n"
                              "      when:\n"
                              "        n: \"-\"\n"
                              "        notReady: \"(0..n]\"\n"
                              "        names: '!= [\"x\"]'\n"
                              "    - id: r3\n"
                              "      when:\n"
                              "        notReady: n\n");
  RuleLoadResult result = Load(text);
  ASSERT_TRUE(result.rule_set) << FormatAll(result, text);
  const std::vector<Rule>& rules = result.rule_set->rules;
  ASSERT_EQ(rules[0].cells.size(), 3u);
  EXPECT_EQ(rules[0].cells[0].kind, Cell::Kind::kCompare);
  EXPECT_EQ(rules[0].cells[0].op, CompareOp::kEq);
  EXPECT_EQ(rules[0].cells[0].text, "3");
  EXPECT_EQ(rules[0].cells[1].kind, Cell::Kind::kExpression);
  EXPECT_EQ(rules[0].cells[2].kind, Cell::Kind::kIn);
  EXPECT_EQ(rules[0].cells[2].operand->text, "[[\"a\", \"b\"]]");
  ASSERT_EQ(rules[1].cells.size(), 2u);  // "-" is not stored
  EXPECT_EQ(rules[1].cells[0].kind, Cell::Kind::kRange);
  EXPECT_FALSE(rules[1].cells[0].low_inclusive);
  EXPECT_TRUE(rules[1].cells[0].high_inclusive);
  EXPECT_EQ(rules[1].cells[1].op, CompareOp::kNe);
  ASSERT_EQ(rules[2].cells.size(), 1u);
  EXPECT_EQ(rules[2].cells[0].kind, Cell::Kind::kCompare);  // names another fact: an implied ==
  EXPECT_EQ(rules[2].cells[0].fact, 1);
}

TEST(RuleLoaderTest, FrameLayoutAndEnvironments) {
  std::string text = RuleFile(std::string(kFactsAndParams) +
                              "  rules:\n"
                              "    - id: r1\n"
                              "      then:\n"
                              "        - action: DeletePod\n"
                              "          forEach: names\n"
                              "          as: pod\n"
                              "          target: pod\n"
                              "          params: {name: pod}\n");
  RuleLoadResult result = Load(text);
  ASSERT_TRUE(result.rule_set) << FormatAll(result, text);
  const RuleSet& rules = *result.rule_set;
  FrameLayout layout{static_cast<int>(rules.facts.size()), static_cast<int>(rules.params.size())};
  EXPECT_EQ(rules.facts[1].expression.program->referenced_slots(), std::vector<int>{layout.snapshot_slot()});
  const ActionSpec& action = rules.rules[0].then[0];
  EXPECT_EQ(action.for_each->program->referenced_slots(), std::vector<int>{layout.fact_slot(2)});
  EXPECT_EQ(action.target->program->referenced_slots(), std::vector<int>{layout.fixed_slots()});
  EXPECT_GT(action.target->program->frame_size(), layout.fixed_slots());
}

TEST(RuleLoaderTest, FactSeesOnlyEarlierFacts) {
  std::string text = RuleFile(
      "  facts:\n"
      "    - name: a\n"
      "      expr: b + 1\n"
      "    - name: b\n"
      "      expr: a + 1\n"
      "  rules: []\n");
  RuleLoadResult result = Load(text);
  EXPECT_FALSE(result.rule_set);
  ASSERT_EQ(result.diagnostics.size(), 1u) << FormatAll(result, text);
  EXPECT_EQ(result.diagnostics[0].message, "undeclared reference to 'b'");
  EXPECT_EQ(result.diagnostics[0].position.line, 11);
  EXPECT_EQ(result.diagnostics[0].position.column, 13);
}

TEST(RuleLoaderTest, AppliesWhenSeesParamsAndTheSnapshotButNoFact) {
  std::string text = RuleFile(std::string(kFactsAndParams) +
                              "  appliesWhen: '\"statefulSet\" in snapshot && n > 0'\n"
                              "  rules: []\n");
  RuleLoadResult result = Load(text);
  EXPECT_FALSE(result.rule_set);
  ASSERT_EQ(result.diagnostics.size(), 1u) << FormatAll(result, text);
  EXPECT_EQ(result.diagnostics[0].message, "undeclared reference to 'n'");
  EXPECT_EQ(result.diagnostics[0].position.line, 20);
  EXPECT_EQ(result.diagnostics[0].position.column, 46);

  text =
      RuleFile(std::string(kFactsAndParams) + "  appliesWhen: '\"statefulSet\" in snapshot'\n  rules: []\n");
  result = Load(text);
  ASSERT_TRUE(result.rule_set) << FormatAll(result, text);
  ASSERT_TRUE(result.rule_set->applies_when.has_value());
  EXPECT_EQ(result.rule_set->applies_when->text, "\"statefulSet\" in snapshot");
}

TEST(RuleLoaderTest, ExpressionErrorsPointIntoScalars) {
  std::string text = RuleFile(std::string(kFactsAndParams) +
                              "  constraints:\n"
                              "    - \"n >= nope\"\n"
                              "    - |\n"
                              "      n >= 0 &&\n"
                              "        nada\n"
                              "    - >\n"
                              "      n >= 0 &&\n"
                              "      zilch\n"
                              "  rules:\n"
                              "    - id: r1\n"
                              "      when:\n"
                              "        n: \"[1..redy]\"\n"
                              "        notReady: '>   zip'\n");
  RuleLoadResult result = Load(text);
  ASSERT_EQ(result.diagnostics.size(), 5u) << FormatAll(result, text);
  auto at = [&](int i) {
    return std::to_string(result.diagnostics[i].position.line) + ":" +
           std::to_string(result.diagnostics[i].position.column);
  };
  EXPECT_EQ(at(0), "21:13");  // inside the quotes
  EXPECT_EQ(at(1), "24:9");   // second line of a literal block
  EXPECT_EQ(at(2), "27:7");   // second line of a folded block
  EXPECT_EQ(at(3), "31:17");  // inside the range
  EXPECT_EQ(at(4), "32:24");  // after the operator
  EXPECT_EQ(result.diagnostics[3].message, "undeclared reference to 'redy'");
}

TEST(RuleLoaderTest, InlineSnapshotScalarsFollowJson) {
  std::string text = RuleFile(
      "  rules: []\n"
      "  tests:\n"
      "    - name: scalars\n"
      "      snapshot:\n"
      "        plainInt: 3\n"
      "        quotedInt: \"3\"\n"
      "        double: 1.5\n"
      "        boolean: true\n"
      "        nothing: ~\n"
      "        word: Ready\n"
      "        list: [1, 'x']\n"
      "      expect: {rules: []}\n");
  RuleLoadResult result = Load(text);
  ASSERT_TRUE(result.rule_set) << FormatAll(result, text);
  const Value& snapshot = *result.rule_set->tests[0].snapshot;
  EXPECT_EQ(*snapshot.Find("plainInt"), Value::Int(3));
  EXPECT_EQ(*snapshot.Find("quotedInt"), Value::String("3"));
  EXPECT_EQ(*snapshot.Find("double"), Value::Double(1.5));
  EXPECT_EQ(*snapshot.Find("boolean"), Value::Bool(true));
  EXPECT_TRUE(snapshot.Find("nothing")->is_null());
  EXPECT_EQ(*snapshot.Find("word"), Value::String("Ready"));
  EXPECT_EQ(*snapshot.Find("list"), Value::MakeList({Value::Int(1), Value::String("x")}));
  EXPECT_EQ(result.rule_set->tests[0].expect_rules->size(), 0u);
}

TEST(RuleLoaderTest, CatalogueChecksAreSkippedWithoutCatalogue) {
  std::string text = RuleFile(
      "  rules:\n"
      "    - id: r1\n"
      "      then:\n"
      "        - action: NoSuchAction\n"
      "          params: {anything: 1}\n");
  EXPECT_TRUE(LoadRuleFile(text, "t.yaml", nullptr).rule_set);
  RuleLoadResult checked = Load(text);
  ASSERT_EQ(checked.diagnostics.size(), 1u);
  EXPECT_EQ(checked.diagnostics[0].message, "unknown action 'NoSuchAction'");
}

TEST(RuleLoaderTest, YamlSyntaxErrorIsOneDiagnostic) {
  RuleLoadResult result = Load("apiVersion: [ruleplane\nkind: x\n");
  EXPECT_FALSE(result.rule_set);
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_NE(result.diagnostics[0].message.find("invalid YAML"), std::string::npos);
  EXPECT_EQ(result.diagnostics[0].position.line, 2);
}

TEST(RuleLoaderTest, CyclicAliasInSnapshotIsAnErrorNotACrash) {
  std::string text = RuleFile(
      "  rules: []\n"
      "  tests:\n"
      "    - name: cycle\n"
      "      snapshot: &loop {self: *loop}\n"
      "      expect: {rules: []}\n");
  RuleLoadResult result = Load(text);
  EXPECT_FALSE(result.rule_set);
  ASSERT_FALSE(result.diagnostics.empty());
}

TEST(FormatDiagnosticTest, KeepsTabsUnderTheCaret) {
  Diagnostic diagnostic{Diagnostic::Severity::kError, {"f.yaml", 2, 4}, "bad"};
  EXPECT_EQ(FormatDiagnostic(diagnostic, "first\n\tab cd\n"), "f.yaml:2:4: error: bad\n\tab cd\n\t  ^\n");
}

// The source line and the caret line of a formatted diagnostic.
std::pair<std::string, std::string> ShownLines(const std::string& formatted) {
  const size_t first = formatted.find('\n');
  const size_t second = formatted.find('\n', first + 1);
  const size_t third = formatted.find('\n', second + 1);
  return {formatted.substr(first + 1, second - first - 1), formatted.substr(second + 1, third - second - 1)};
}

TEST(FormatDiagnosticTest, LongLineIsCutToAWindowAroundTheColumn) {
  std::string line;
  for (int i = 0; i < 30; ++i) line += "abcdefghi" + std::to_string(i % 10);
  ASSERT_EQ(line.size(), 300u);
  auto shown = [&](int column) {
    return ShownLines(
        FormatDiagnostic({Diagnostic::Severity::kError, {"f.yaml", 2, column}, "bad"}, "x\n" + line));
  };
  const auto [middle, middle_caret] = shown(151);
  EXPECT_EQ(middle, "..." + line.substr(100, 100) + "...");
  EXPECT_EQ(middle_caret, std::string(3 + 50, ' ') + "^");
  const auto [start, start_caret] = shown(10);
  EXPECT_EQ(start, line.substr(0, 100) + "...");
  EXPECT_EQ(start_caret, std::string(9, ' ') + "^");
  const auto [end, end_caret] = shown(300);
  EXPECT_EQ(end, "..." + line.substr(200));
  EXPECT_EQ(end_caret, std::string(3 + 99, ' ') + "^");
  // A line of exactly 100 bytes is shown whole.
  EXPECT_EQ(ShownLines(FormatDiagnostic({Diagnostic::Severity::kError, {"f.yaml", 1, 80}, "bad"},
                                        line.substr(0, 100)))
                .first,
            line.substr(0, 100));
}

TEST(FormatDiagnosticTest, WindowDoesNotCutACharacterInTwo) {
  std::string line;
  for (int i = 0; i < 100; ++i) line += "\xc3\xa9";  // 200 bytes of "é"
  const auto [shown, caret] =
      ShownLines(FormatDiagnostic({Diagnostic::Severity::kError, {"f.yaml", 1, 101}, "bad"}, line));
  EXPECT_EQ(shown, "..." + line.substr(50, 100) + "...");
  const auto [odd, odd_caret] =
      ShownLines(FormatDiagnostic({Diagnostic::Severity::kError, {"f.yaml", 1, 102}, "bad"}, line));
  EXPECT_EQ(odd, "..." + line.substr(50, 102) + "...");
}

TEST(FormatDiagnosticTest, RuleFileOnOneLineShowsAWindowOfItInEachDiagnostic) {
  // A rule file in YAML flow style, one line of about 30 KB, with an error in each rule.
  std::string text =
      "{apiVersion: ruleplane.dev/v1, kind: DecisionTable, metadata: {name: one-line, version: 1.0.0}, "
      "spec: {subject: EtcdCluster, hitPolicy: FIRST, facts: [{name: ready, expr: snapshot.ready}], rules: [";
  for (int r = 0; r < 600; ++r) {
    text += std::string(r > 0 ? ", " : "") + "{id: rule-" + std::to_string(r) + ", when: {ready: \"> redy" +
            std::to_string(r) + "\"}}";
  }
  text += "]}}\n";
  ASSERT_GT(text.size(), 25000u);
  RuleLoadResult result = LoadRuleFile(text, "one-line.yaml", RepoCatalogue().get());
  ASSERT_EQ(result.diagnostics.size(), 600u) << FormatDiagnostic(result.diagnostics.front(), text);
  size_t total = 0;
  for (const Diagnostic& diagnostic : result.diagnostics) {
    const std::string formatted = FormatDiagnostic(diagnostic, text);
    total += formatted.size();
    const auto [shown, caret] = ShownLines(formatted);
    EXPECT_LE(shown.size(), 106u);
    // The caret is under the character the column names.
    const size_t offset = caret.size() - 1;
    ASSERT_LT(offset, shown.size()) << formatted;
    EXPECT_EQ(shown[offset], text[diagnostic.position.column - 1]) << formatted;
    const size_t quote = diagnostic.message.find('\'');
    const std::string name = diagnostic.message.substr(quote + 1, diagnostic.message.size() - quote - 2);
    EXPECT_EQ(shown.substr(offset, name.size()), name) << formatted;
  }
  EXPECT_LT(total, 600u * 250u);
}

TEST(FormatDiagnosticTest, UnknownPositionHasNoSourceLine) {
  Diagnostic diagnostic{Diagnostic::Severity::kWarning, {"f.yaml", 0, 0}, "odd"};
  EXPECT_EQ(FormatDiagnostic(diagnostic, "text\n"), "f.yaml: warning: odd\n");
}

TEST(Sha256Test, KnownVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(SemverTest, AcceptsAndRejects) {
  for (const char* valid : {"0.0.0", "1.0.0", "10.20.30", "1.0.0-alpha.1", "1.0.0-0.3.7", "1.0.0+build.5",
                            "1.0.0-rc.1+sha.abc"}) {
    EXPECT_TRUE(IsValidSemver(valid)) << valid;
  }
  for (const char* invalid : {"", "1", "1.0", "1.0.0.0", "01.0.0", "1.0.0-", "1.0.0-01", "v1.0.0", "1.0.0+",
                              "1..0", "1.0.0-a..b"}) {
    EXPECT_FALSE(IsValidSemver(invalid)) << invalid;
  }
}

TEST(CellParserTest, Forms) {
  auto range = ParseCellSyntax(" [a..f(b, c)) ");
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(range->form, CellSyntax::Form::kRange);
  EXPECT_EQ(range->low.text, "a");
  EXPECT_EQ(range->low.offset, 2u);
  EXPECT_EQ(range->high.text, "f(b, c)");
  EXPECT_EQ(range->high.offset, 5u);
  EXPECT_FALSE(range->high_inclusive);

  auto compare = ParseCellSyntax(">=  n + 1");
  ASSERT_TRUE(compare.ok());
  EXPECT_EQ(compare->op, CompareOp::kGe);
  EXPECT_EQ(compare->operand.offset, 4u);

  EXPECT_EQ(ParseCellSyntax("in xs")->form, CellSyntax::Form::kIn);
  EXPECT_EQ(ParseCellSyntax("inSync")->form, CellSyntax::Form::kBare);
  EXPECT_EQ(ParseCellSyntax("[1, 2]")->form, CellSyntax::Form::kBare);
  EXPECT_EQ(ParseCellSyntax("\"a..b\"")->form, CellSyntax::Form::kBare);
  EXPECT_EQ(ParseCellSyntax("-")->form, CellSyntax::Form::kAny);
}

TEST(CellParserTest, Errors) {
  EXPECT_EQ(ParseCellSyntax("  ").error().message, "empty cell; write '-' for any value");
  EXPECT_EQ(ParseCellSyntax("[1..3").error().position.column, 6);
  EXPECT_EQ(ParseCellSyntax("[..3]").error().message, "range cell is missing its lower bound");
  EXPECT_EQ(ParseCellSyntax("(1..3] x").error().position.column, 7);
  EXPECT_EQ(ParseCellSyntax("<= ").error().message, "expected an expression after '<='");
}

// Golden files: tests/golden/lint/<case>.yaml -> <case>.expected, every
// diagnostic formatted. RULEPLANE_UPDATE_GOLDEN=1 rewrites the expected files.
std::vector<std::string> GoldenCases() {
  std::vector<std::string> cases;
  if (!fs::is_directory(kSourceDir / "tests/golden/lint")) return cases;
  for (const auto& entry : fs::directory_iterator(kSourceDir / "tests/golden/lint")) {
    if (entry.path().extension() == ".yaml") cases.push_back(entry.path().stem().string());
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

class LintGoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(LintGoldenTest, MatchesExpected) {
  ASSERT_TRUE(RepoCatalogue());
  const fs::path dir = kSourceDir / "tests/golden/lint";
  std::string text = ReadFile(dir / (GetParam() + ".yaml"));
  RuleLoadResult result =
      LoadRuleFile(text, "tests/golden/lint/" + GetParam() + ".yaml", RepoCatalogue().get());
  std::string actual = FormatAll(result, text);
  EXPECT_EQ(result.rule_set == nullptr, HasErrors(result.diagnostics));
  fs::path expected_path = dir / (GetParam() + ".expected");
  const char* update = std::getenv("RULEPLANE_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(expected_path, std::ios::binary) << actual;
    return;
  }
  ASSERT_TRUE(fs::exists(expected_path))
      << "missing " << expected_path << "; run with RULEPLANE_UPDATE_GOLDEN=1";
  EXPECT_EQ(actual, ReadFile(expected_path));
}

INSTANTIATE_TEST_SUITE_P(Lint, LintGoldenTest, ::testing::ValuesIn(GoldenCases()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(LintGoldenTest, TenMistakesFileHasExactlyTenErrors) {
  std::string text = ReadFile(kSourceDir / "tests/golden/lint/ten_mistakes.yaml");
  RuleLoadResult result = LoadRuleFile(text, "ten_mistakes.yaml", RepoCatalogue().get());
  EXPECT_EQ(result.diagnostics.size(), 10u) << FormatAll(result, text);
}

}  // namespace
}  // namespace ruleplane
