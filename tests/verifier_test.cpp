// ruleplane verify and diff on small tables: every kind of finding, the
// counts of states, and the pruned enumeration checked state by state
// against the unpruned one.
#include "engine/verify/verifier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine/common/bitset.h"
#include "engine/rule_file/rule_loader.h"
#include "engine/rule_file/verification_model.h"
#include "engine/verify/domain_enumerator.h"
#include "engine/verify/region.h"
#include "engine/verify/rule_set_diff.h"

namespace ruleplane {
namespace {

constexpr const char* kHeader = R"(apiVersion: ruleplane.dev/v1
kind: DecisionTable
metadata: {name: quorum, version: 1.0.0}
spec:
  subject: EtcdCluster
)";

// n in [1, 5], ready in [0, n], quorate derived: 20 states.
constexpr const char* kQuorumFacts = R"(  facts:
    - {name: n, expr: snapshot.n, domain: "int [1, 5]"}
    - {name: ready, expr: snapshot.ready, domain: "int [0, n]"}
    - {name: quorate, expr: 2 * ready > n}
)";

constexpr const char* kScaleToZeroInvariant = R"(  invariants:
    - '!steps.exists(s, s.action == "ScaleStatefulSet" && s.params.replicas == 0) || 2 * ready <= n'
)";

std::shared_ptr<const CompiledRuleSet> Compile(const std::string& spec) {
  const std::string text = std::string(kHeader) + spec;
  RuleLoadResult loaded = LoadRuleFile(text, "quorum.yaml", nullptr);
  for (const Diagnostic& d : loaded.diagnostics) ADD_FAILURE() << FormatDiagnostic(d, text);
  if (!loaded.rule_set) return nullptr;
  auto compiled = CompiledRuleSet::Compile(loaded.rule_set);
  EXPECT_TRUE(compiled.ok());
  return compiled.ok() ? *compiled : nullptr;
}

std::string QuorumTable(const std::string& hit_policy, const std::string& rules,
                        const std::string& extra = "") {
  return "  hitPolicy: " + hit_policy + "\n" + kQuorumFacts + extra + "  rules:\n" + rules;
}

constexpr const char* kHealthy = R"(    - id: healthy
      when: {ready: "== n"}
)";
constexpr const char* kDegraded = R"(    - id: degraded
      when: {quorate: true}
      then: [{action: DeletePod, params: {name: '"x"'}}]
)";
constexpr const char* kLost = R"(    - id: lost
      when: {quorate: false}
      then: [{action: ScaleStatefulSet, params: {replicas: 0}}]
)";

const Finding* FindKind(const VerificationReport& report, Finding::Kind kind) {
  for (const Finding& finding : report.findings) {
    if (finding.kind == kind) return &finding;
  }
  return nullptr;
}

int64_t ExampleInt(const VerificationReport& report, const Region& region, const std::string& name) {
  for (size_t i = 0; i < report.names.size(); ++i) {
    if (report.names[i] == name && region.example[i].is_int()) return region.example[i].int_value();
  }
  ADD_FAILURE() << "no int example for " << name;
  return -1;
}

TEST(VerifierTest, CompleteTableHasNoFindingsAndCountsEveryState) {
  auto compiled =
      Compile(QuorumTable("FIRST", std::string(kHealthy) + kDegraded + kLost, kScaleToZeroInvariant));
  ASSERT_TRUE(compiled);
  VerificationReport report = Verify(compiled, {});
  EXPECT_TRUE(report.findings.empty()) << FormatVerificationReport(report, 0);
  EXPECT_EQ(report.states, 20u);
  EXPECT_EQ(report.enumeration_order, (std::vector<std::string>{"n", "ready"}));
}

TEST(VerifierTest, GapHasRegionsAndAnExampleThatNoRuleDecides) {
  auto compiled = Compile(QuorumTable("FIRST", std::string(kHealthy) + kDegraded));
  ASSERT_TRUE(compiled);
  VerificationReport report = Verify(compiled, {});
  const Finding* gap = FindKind(report, Finding::Kind::kGap);
  ASSERT_NE(gap, nullptr) << FormatVerificationReport(report, 0);
  EXPECT_EQ(gap->severity, Diagnostic::Severity::kError);
  EXPECT_EQ(gap->states, 11u);  // 2 * ready <= n and ready < n: 1 + 2 + 2 + 3 + 3
  for (const Region& region : gap->regions) {
    const int64_t n = ExampleInt(report, region, "n"), ready = ExampleInt(report, region, "ready");
    EXPECT_LE(2 * ready, n);
    EXPECT_LT(ready, n);
  }
  EXPECT_EQ(report.Count(Diagnostic::Severity::kError), 1);
}

TEST(VerifierTest, AllowGapsTurnsGapsIntoWarnings) {
  auto compiled = Compile(QuorumTable("FIRST", std::string(kHealthy) + kDegraded, "  allowGaps: true\n"));
  ASSERT_TRUE(compiled);
  VerificationReport report = Verify(compiled, {});
  const Finding* gap = FindKind(report, Finding::Kind::kGap);
  ASSERT_NE(gap, nullptr);
  EXPECT_EQ(gap->severity, Diagnostic::Severity::kWarning);
  EXPECT_EQ(report.Count(Diagnostic::Severity::kError), 0);
}

TEST(VerifierTest, MaskedRuleNamesTheRuleThatWins) {
  const std::string nobody_ready = R"(    - id: nobody-ready
      when: {ready: 0}
      then: [{action: RaiseAlert, params: {severity: '"critical"'}}]
)";
  auto compiled = Compile(QuorumTable("FIRST", std::string(kHealthy) + kDegraded + kLost + nobody_ready));
  ASSERT_TRUE(compiled);
  VerificationReport report = Verify(compiled, {});
  const Finding* masked = FindKind(report, Finding::Kind::kMaskedRule);
  ASSERT_NE(masked, nullptr) << FormatVerificationReport(report, 0);
  EXPECT_NE(masked->message.find("'nobody-ready'"), std::string::npos);
  EXPECT_EQ(masked->states, 5u);
  ASSERT_EQ(masked->causes.size(), 1u);
  EXPECT_EQ(masked->causes[0].message, "masked by 'lost'");
  EXPECT_EQ(ExampleInt(report, masked->causes[0].regions[0], "ready"), 0);
}

TEST(VerifierTest, RuleThatCanNeverMatchIsDead) {
  const std::string impossible = R"(    - id: impossible
      when: {ready: "> n"}
)";
  auto compiled = Compile(QuorumTable("FIRST", std::string(kHealthy) + kDegraded + kLost + impossible));
  ASSERT_TRUE(compiled);
  VerificationReport report = Verify(compiled, {});
  const Finding* dead = FindKind(report, Finding::Kind::kDeadRule);
  ASSERT_NE(dead, nullptr) << FormatVerificationReport(report, 0);
  EXPECT_NE(dead->message.find("'impossible' never matches"), std::string::npos);
  EXPECT_EQ(dead->position.line, 20);
}

TEST(VerifierTest, UniqueConflictListsTheRulesThatMatchTogether) {
  auto compiled = Compile(QuorumTable("UNIQUE", std::string(kHealthy) + kDegraded + kLost));
  ASSERT_TRUE(compiled);
  VerificationReport report = Verify(compiled, {});
  const Finding* conflict = FindKind(report, Finding::Kind::kConflict);
  ASSERT_NE(conflict, nullptr) << FormatVerificationReport(report, 0);
  EXPECT_EQ(conflict->message, "rules 'healthy' and 'degraded' match together (UNIQUE)");
  EXPECT_EQ(conflict->states, 5u);          // ready == n
  ASSERT_EQ(conflict->regions.size(), 5u);  // a diagonal: one region per n
  EXPECT_EQ(FormatRegion(conflict->regions[0], report.names, {0, 1, 2}), "n=1, ready=1");
}

TEST(VerifierTest, CollectOverlapOfDifferentActionsIsAWarning) {
  auto compiled = Compile(QuorumTable("COLLECT", std::string(kHealthy) + kDegraded + kLost));
  ASSERT_TRUE(compiled);
  VerificationReport report = Verify(compiled, {});
  const Finding* overlap = FindKind(report, Finding::Kind::kOverlap);
  ASSERT_NE(overlap, nullptr) << FormatVerificationReport(report, 0);
  EXPECT_EQ(overlap->severity, Diagnostic::Severity::kWarning);
  EXPECT_EQ(overlap->states, 5u);
}

TEST(VerifierTest, InvariantViolationComesWithACounterexample) {
  const std::string lost_too_early = R"(    - id: lost
      when: {ready: "ready <= n / 2 + 1"}
      then: [{action: ScaleStatefulSet, params: {replicas: 0}}]
)";
  auto compiled = Compile(
      QuorumTable("FIRST", std::string(kHealthy) + lost_too_early + kDegraded, kScaleToZeroInvariant));
  ASSERT_TRUE(compiled);
  VerificationReport report = Verify(compiled, {});
  const Finding* invariant = FindKind(report, Finding::Kind::kInvariant);
  ASSERT_NE(invariant, nullptr) << FormatVerificationReport(report, 0);
  EXPECT_EQ(invariant->states, 3u);  // n=3 ready=2, n=4 ready=3, n=5 ready=3
  for (const Region& region : invariant->regions) {
    EXPECT_GT(2 * ExampleInt(report, region, "ready"), ExampleInt(report, region, "n"));
  }
  EXPECT_NE(FormatVerificationReport(report, 3).find("error: invariant violated: !steps.exists"),
            std::string::npos);
}

TEST(VerifierTest, ConstraintsExcludeStates) {
  auto compiled = Compile(QuorumTable("FIRST", std::string(kHealthy) + kDegraded + kLost,
                                      "  constraints: [\"ready > 0 || n == 1\"]\n"));
  ASSERT_TRUE(compiled);
  EXPECT_EQ(Verify(compiled, {}).states, 16u);  // ready = 0 only with n = 1
}

TEST(VerifierTest, ParamOverridesChangeTheDecision) {
  const std::string spec = R"(  hitPolicy: FIRST
  params:
    - {name: threshold, type: int, default: 3}
  facts:
    - {name: n, expr: snapshot.n, domain: "int [0, 5]"}
  rules:
    - id: big
      when: {n: ">= threshold"}
)";
  auto compiled = Compile(spec);
  ASSERT_TRUE(compiled);
  EXPECT_EQ(FindKind(Verify(compiled, {}), Finding::Kind::kGap)->states, 3u);
  EXPECT_EQ(FindKind(Verify(compiled, {{"threshold", Value::String("1")}}), Finding::Kind::kGap)->states, 1u);
}

TEST(VerifierTest, ValuesThatCellsTreatAlikeAreEnumeratedOnce) {
  const std::string spec = R"(  hitPolicy: FIRST
  facts:
    - {name: x, expr: snapshot.x, domain: "int [0, 1000]"}
    - {name: role, expr: snapshot.role, domain: 'enum ["Leader", "Member", "Learner"]'}
  rules:
    - id: big-leader
      when: {x: "> 10", role: '"Leader"'}
    - id: small
      when: {x: "[0..10]"}
)";
  auto compiled = Compile(spec);
  ASSERT_TRUE(compiled);
  VerificationReport report = Verify(compiled, {});
  EXPECT_EQ(report.states, 3003u);
  EXPECT_LT(report.evaluations, 20u);
  const Finding* gap = FindKind(report, Finding::Kind::kGap);
  ASSERT_NE(gap, nullptr);
  EXPECT_EQ(gap->states, 2 * 990u);
  EXPECT_EQ(FormatRegion(gap->regions[0], report.names, {0, 1}),
            "x in [11..1000], role in {\"Learner\", \"Member\"}");
}

TEST(VerifierTest, TableThatReadsTheSnapshotInACellCannotBeVerified) {
  const std::string spec = R"(  facts:
    - {name: n, expr: snapshot.n, domain: "int [0, 3]"}
    - {name: names, expr: snapshot.names}
  rules:
    - id: direct
      when: {n: "> snapshot.min"}
    - id: listy
      when: {names: "names.size() > 0"}
)";
  const std::string text = std::string(kHeader) + spec;
  RuleLoadResult loaded = LoadRuleFile(text, "quorum.yaml", nullptr);
  ASSERT_TRUE(loaded.rule_set);
  ASSERT_EQ(loaded.diagnostics.size(), 2u);
  EXPECT_EQ(loaded.diagnostics[0].severity, Diagnostic::Severity::kWarning);
  EXPECT_EQ(loaded.diagnostics[0].message,
            "verify cannot evaluate this cell: it reads the snapshot; read it through a fact with a domain");
  EXPECT_EQ(
      loaded.diagnostics[1].message,
      "verify cannot evaluate this cell: fact 'names' has no domain and is not computed from facts that have "
      "one");
  auto compiled = CompiledRuleSet::Compile(loaded.rule_set);
  ASSERT_TRUE(compiled.ok());
  VerificationReport report = Verify(*compiled, {});
  ASSERT_EQ(report.findings.size(), 2u);
  EXPECT_EQ(report.findings[0].kind, Finding::Kind::kUnverifiable);
  EXPECT_EQ(report.findings[0].position.line, 11);
}

TEST(VerifierTest, TableWithoutDomainsHasNoLintWarnings) {
  const std::string text = std::string(kHeader) + R"(  facts:
    - {name: n, expr: snapshot.n}
  rules:
    - id: direct
      when: {n: "> snapshot.min"}
)";
  RuleLoadResult loaded = LoadRuleFile(text, "quorum.yaml", nullptr);
  ASSERT_TRUE(loaded.rule_set);
  EXPECT_TRUE(loaded.diagnostics.empty());
  EXPECT_EQ(AnalyzeForVerification(*loaded.rule_set).problems.size(), 1u);
}

TEST(VerifierTest, InvariantsSeeRulesActionsAndSteps) {
  const std::string invariants = R"(  invariants:
    - 'rules.size() == 1'
    - '!("ScaleStatefulSet" in actions) || rules == ["lost"]'
    - 'steps.all(s, s.rule in rules && (s.action != "ScaleStatefulSet" || s.params == {"replicas": 0}))'
    - '!steps.exists(s, s.action == "DeletePod") || quorate'
)";
  auto compiled = Compile(QuorumTable("FIRST", std::string(kHealthy) + kDegraded + kLost, invariants));
  ASSERT_TRUE(compiled);
  VerificationReport report = Verify(compiled, {});
  EXPECT_TRUE(report.findings.empty()) << FormatVerificationReport(report, 0);
}

TEST(VerifierTest, InvariantThatCannotBeEvaluatedIsAnError) {
  auto compiled = Compile(QuorumTable("FIRST", std::string(kHealthy) + kDegraded + kLost,
                                      "  invariants: ['steps.all(s, s.params.replicas == 0)']\n"));
  ASSERT_TRUE(compiled);
  VerificationReport report = Verify(compiled, {});
  const Finding* error = FindKind(report, Finding::Kind::kEvaluationError);
  ASSERT_NE(error, nullptr) << FormatVerificationReport(report, 0);
  EXPECT_NE(error->message.find("no such key: replicas"), std::string::npos) << error->message;
}

TEST(VerifierTest, DomainBoundThatCannotBeEvaluatedIsAnError) {
  const std::string spec = R"(  hitPolicy: FIRST
  facts:
    - {name: n, expr: snapshot.n, domain: "int [0, 2]"}
    - {name: ready, expr: snapshot.ready, domain: "int [0, 4 / n]"}
  rules:
    - id: any
      when: {ready: ">= 0"}
)";
  auto compiled = Compile(spec);
  ASSERT_TRUE(compiled);
  VerificationReport report = Verify(compiled, {});
  const Finding* error = FindKind(report, Finding::Kind::kEvaluationError);
  ASSERT_NE(error, nullptr) << FormatVerificationReport(report, 0);
  EXPECT_NE(error->message.find("the domain bound of fact 'ready' is not an int: division by zero"),
            std::string::npos)
      << error->message;
  EXPECT_EQ(FormatRegion(error->regions[0], report.names, {0, 1}), "n=0");
}

// A FIRST table of `count` rules over x and y in [0, 5] (36 states), drawn
// with a fixed seed, and the states each rule matches: most rules are masked,
// some never match (an empty range, a condition no state satisfies).
struct GeneratedTable {
  std::string spec;
  std::vector<std::vector<bool>> matches;  // per rule, per state 6 * x + y
};

GeneratedTable GenerateTable(int count) {
  std::mt19937 random(7);
  auto draw = [&](int n) { return static_cast<int>(random() % static_cast<unsigned>(n)); };
  GeneratedTable table;
  table.spec = R"(  hitPolicy: FIRST
  allowGaps: true
  facts:
    - {name: x, expr: snapshot.x, domain: "int [0, 5]"}
    - {name: y, expr: snapshot.y, domain: "int [0, 5]"}
  rules:
)";
  for (int r = 0; r < count; ++r) {
    std::vector<bool> accepts[2];
    std::string when;
    for (int f = 0; f < 2; ++f) {
      const int a = draw(6);
      const int b = a + draw(7 - a);
      std::string cell;
      accepts[f].assign(6, true);
      switch (draw(4)) {
        case 0:
          break;
        case 1:
          cell = "== " + std::to_string(a);
          for (int v = 0; v < 6; ++v) accepts[f][v] = v == a;
          break;
        case 2:
          cell = "[" + std::to_string(a) + ".." + std::to_string(b) + ")";
          for (int v = 0; v < 6; ++v) accepts[f][v] = a <= v && v < b;
          break;
        default:
          cell = "!= " + std::to_string(a);
          for (int v = 0; v < 6; ++v) accepts[f][v] = v != a;
          break;
      }
      if (!cell.empty())
        when += std::string(when.empty() ? "" : ", ") + (f == 0 ? "x" : "y") + ": \"" + cell + "\"";
    }
    const int condition = draw(8);  // 0: never true, 1 and 2: a parity, else none
    table.spec += "    - id: r" + std::to_string(r) + "\n      when: {" + when + "}\n";
    if (condition == 0) table.spec += "      condition: x + y > 10\n";
    if (condition == 1 || condition == 2)
      table.spec += "      condition: (x + y) % 2 == " + std::to_string(condition - 1) + "\n";
    std::vector<bool> matches(36);
    for (int x = 0; x < 6; ++x) {
      for (int y = 0; y < 6; ++y) {
        const bool holds = condition == 0 ? false : condition <= 2 ? (x + y) % 2 == condition - 1 : true;
        matches[6 * x + y] = accepts[0][x] && accepts[1][y] && holds;
      }
    }
    table.matches.push_back(std::move(matches));
  }
  return table;
}

// "rule 'r12' never matches ..." -> "r12"
std::string QuotedRule(const std::string& message) {
  const size_t open = message.find('\'');
  return message.substr(open + 1, message.find('\'', open + 1) - open - 1);
}

TEST(VerifierTest, TenThousandRulesGiveEveryDeadAndMaskedRuleWithItsCauses) {
  const int count = 10000;
  const GeneratedTable table = GenerateTable(count);
  auto compiled = Compile(table.spec);
  ASSERT_TRUE(compiled);
  const VerificationReport report = Verify(compiled, {});
  EXPECT_EQ(report.states, 36u);

  // What FIRST selects, state by state; then per rule never selected, its
  // winners and their states.
  std::vector<int> winner(36, -1);
  uint64_t gap_states = 0;
  for (int state = 0; state < 36; ++state) {
    for (int r = 0; r < count && winner[state] < 0; ++r) {
      if (table.matches[r][state]) winner[state] = r;
    }
    gap_states += winner[state] < 0 ? 1 : 0;
  }
  std::set<std::string> dead;
  std::map<std::string, std::map<std::string, uint64_t>> masked;
  for (int r = 0; r < count; ++r) {
    if (std::find(winner.begin(), winner.end(), r) != winner.end()) continue;
    const std::string id = "r" + std::to_string(r);
    bool matches = false;
    for (int state = 0; state < 36; ++state) {
      if (!table.matches[r][state]) continue;
      matches = true;
      ++masked[id]["masked by 'r" + std::to_string(winner[state]) + "'"];
    }
    if (!matches) dead.insert(id);
  }
  ASSERT_GT(dead.size(), 100u);
  ASSERT_GT(masked.size(), 1000u);

  std::set<std::string> found_dead;
  std::map<std::string, std::map<std::string, uint64_t>> found_masked;
  for (const Finding& finding : report.findings) {
    if (finding.kind == Finding::Kind::kDeadRule) {
      found_dead.insert(QuotedRule(finding.message));
    } else if (finding.kind == Finding::Kind::kMaskedRule) {
      auto& causes = found_masked[QuotedRule(finding.message)];
      for (const Finding& cause : finding.causes) causes[cause.message] += cause.states;
    } else if (finding.kind == Finding::Kind::kGap) {
      EXPECT_EQ(finding.states, gap_states);
    } else {
      ADD_FAILURE() << "unexpected finding: " << finding.message;
    }
  }
  EXPECT_EQ(found_dead, dead);
  EXPECT_EQ(found_masked, masked);
}

TEST(VerifierTest, DeadAndMaskedRuleSearchesEvaluateEachRuleOncePerState) {
  // The searches (one per rule never selected) share what they compute: the
  // work grows with the rules, not with their square.
  auto small = Compile(GenerateTable(1000).spec);
  auto large = Compile(GenerateTable(4000).spec);
  ASSERT_TRUE(small && large);
  const VerificationReport small_report = Verify(small, {});
  const VerificationReport large_report = Verify(large, {});
  EXPECT_GT(small_report.findings.size(), 500u);
  EXPECT_LT(large_report.rule_evaluations, 5 * small_report.rule_evaluations)
      << small_report.rule_evaluations << " rule evaluations for 1000 rules, "
      << large_report.rule_evaluations << " for 4000";
}

// Every state of a settled region is decided as the unpruned enumeration
// decides it, state by state.
void ExpectPruningIsExact(const std::shared_ptr<const CompiledRuleSet>& compiled) {
  auto enumerator = DomainEnumerator::Create({{compiled, {}}});
  ASSERT_TRUE(enumerator.ok()) << enumerator.error().message;
  struct Settled {
    Region region;
    std::vector<int> selected;
    bool violation;
    std::vector<Tri> invariants;
  };
  std::vector<Settled> settled;
  EnumerationOptions pruned;
  pruned.triage = [](const std::vector<TablePoint>& p) {
    return p[0].decision.known ? Triage::kSettled : Triage::kContinue;
  };
  const EnumerationStats stats = (*enumerator)->Run(pruned, [&](const EnumeratedRegion& r) {
    settled.push_back({r.region, r.tables[0].decision.selected, r.tables[0].decision.violation.has_value(),
                       r.tables[0].invariants});
  });
  EnumerationOptions full;
  full.triage = [](const std::vector<TablePoint>&) { return Triage::kContinue; };
  uint64_t states = 0;
  (*enumerator)->Run(full, [&](const EnumeratedRegion& r) {
    states += r.region.states;
    int containing = 0;
    for (const Settled& s : settled) {
      bool inside = true;
      for (size_t axis = 0; axis < s.region.axes.size() && inside; ++axis) {
        const RegionAxis& bounds = s.region.axes[axis];
        if (bounds.any || r.region.example[axis].is_null()) continue;
        inside = std::find(bounds.values.begin(), bounds.values.end(), r.region.example[axis]) !=
                 bounds.values.end();
      }
      if (!inside) continue;
      ++containing;
      EXPECT_EQ(s.selected, r.tables[0].decision.selected);
      EXPECT_EQ(s.violation, r.tables[0].decision.violation.has_value());
      EXPECT_EQ(s.invariants, r.tables[0].invariants);
    }
    EXPECT_EQ(containing, 1);
  });
  EXPECT_EQ(stats.states, states);
  // Counting the states of regions with undecided constraints gives the same total.
  EnumerationOptions counted = pruned;
  counted.split_on_constraints = false;
  uint64_t counted_states = 0;
  (*enumerator)->Run(counted, [&](const EnumeratedRegion& r) { counted_states += r.region.states; });
  EXPECT_EQ(counted_states, states);
  // A search for one rule sees exactly the states where it matches.
  const int rule_count = static_cast<int>(compiled->rule_set().rules.size());
  for (int rule = 0; rule < rule_count; ++rule) {
    uint64_t expected = 0, found = 0;
    (*enumerator)->Run(full, [&](const EnumeratedRegion& r) {
      const std::vector<int>& matched = r.tables[0].decision.matched;
      if (std::find(matched.begin(), matched.end(), rule) != matched.end()) expected += r.region.states;
    });
    EnumerationOptions one = counted;
    one.invariants = false;
    one.interesting_rules = {std::vector<uint64_t>(bitset::WordCount(rule_count), 0)};
    bitset::Set(one.interesting_rules[0].data(), rule);
    one.triage = [rule](const std::vector<TablePoint>& p) {
      if (p[0].rules[rule] == Tri::kFalse) return Triage::kSkip;
      return p[0].rules[rule] == Tri::kTrue ? Triage::kSettled : Triage::kContinue;
    };
    (*enumerator)->Run(one, [&](const EnumeratedRegion& r) { found += r.region.states; });
    EXPECT_EQ(found, expected) << "rule " << rule;
  }
}

TEST(DomainEnumeratorTest, SearchesThatShareACacheFindWhatEachFindsAlone) {
  // 100 rules (a cache serves tables of 64 rules or more) over facts whose
  // values are classes (z), a derived fact and a constraint.
  std::mt19937 random(11);
  auto draw = [&](int n) { return std::to_string(random() % static_cast<unsigned>(n)); };
  std::string spec = R"(  hitPolicy: FIRST
  allowGaps: true
  facts:
    - {name: x, expr: snapshot.x, domain: "int [0, 5]"}
    - {name: y, expr: snapshot.y, domain: "int [0, 5]"}
    - {name: z, expr: snapshot.z, domain: "int [0, 9]"}
    - {name: big, expr: x + z > 8}
  constraints:
    - x <= z + 2
  rules:
)";
  for (int r = 0; r < 100; ++r) {
    const std::string cells[] = {"",
                                 "x: \"== " + draw(6) + "\"",
                                 "x: \"!= " + draw(6) + "\"",
                                 "z: \"> " + draw(10) + "\"",
                                 "z: \"< " + draw(10) + "\"",
                                 "big: true"};
    std::string when = cells[random() % 6];
    const std::string second = cells[random() % 6];
    if (!second.empty() && second.substr(0, 2) != when.substr(0, 2))
      when += std::string(when.empty() ? "" : ", ") + second;
    spec += "    - id: r" + std::to_string(r) + "\n      when: {" + when + "}\n";
    if (random() % 4 == 0) spec += "      condition: (x + y) % 2 == " + draw(2) + "\n";
  }
  auto compiled = Compile(spec);
  ASSERT_TRUE(compiled);
  auto enumerator = DomainEnumerator::Create({{compiled, {}}});
  ASSERT_TRUE(enumerator.ok()) << enumerator.error().message;
  std::vector<int> order((*enumerator)->names().size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  uint64_t evaluations[2] = {0, 0};  // without and with the cache
  auto run = [&](const EnumerationOptions& options) {
    std::vector<std::string> found;
    const EnumerationStats stats = (*enumerator)->Run(options, [&](const EnumeratedRegion& r) {
      std::string selected;
      for (const int rule : r.tables[0].decision.selected) selected += std::to_string(rule) + " ";
      found.push_back(FormatRegion(r.region, (*enumerator)->names(), order) + " e.g. " +
                      FormatExample(r.region, (*enumerator)->names(), order) + ": " +
                      std::to_string(r.region.states) + " selecting " + selected);
    });
    found.push_back(std::to_string(stats.states) + " states, " + std::to_string(stats.nodes) + " nodes");
    evaluations[options.cache != nullptr ? 1 : 0] += stats.rule_evaluations;
    return found;
  };
  EnumerationCache cache;
  int masked = 0;
  for (int rule = 0; rule < 100; ++rule) {
    // The search verify makes for a rule never selected.
    EnumerationOptions options;
    options.invariants = false;
    options.split_on_constraints = false;
    options.interesting_rules = {std::vector<uint64_t>(bitset::WordCount(100), 0)};
    bitset::SetFirst(options.interesting_rules[0].data(), bitset::WordCount(100), rule + 1);
    options.triage = [rule](const std::vector<TablePoint>& p) {
      if (p[0].rules[rule] == Tri::kFalse) return Triage::kSkip;
      return p[0].rules[rule] == Tri::kTrue && p[0].decision.known ? Triage::kSettled : Triage::kContinue;
    };
    const std::vector<std::string> alone = run(options);
    options.cache = &cache;
    EXPECT_EQ(run(options), alone) << "rule " << rule;
    for (const std::string& region : alone)
      masked += region.find(" selecting " + std::to_string(rule) + " ") == std::string::npos ? 1 : 0;
  }
  EXPECT_GT(masked, 100);
  EXPECT_LT(evaluations[1] * 4, evaluations[0]);
  // A whole enumeration too.
  EnumerationOptions whole;
  whole.triage = [](const std::vector<TablePoint>& p) {
    return p[0].decision.known ? Triage::kSettled : Triage::kContinue;
  };
  const std::vector<std::string> alone = run(whole);
  whole.cache = &cache;
  EXPECT_EQ(run(whole), alone);
}

TEST(DomainEnumeratorTest, PruningDecidesEveryStateAsTheFullEnumeration) {
  const std::string spec = R"(  hitPolicy: PRIORITY
  params:
    - {name: limit, type: int, default: 2}
  facts:
    - {name: n, expr: snapshot.n, domain: "int [0, 4]"}
    - {name: ready, expr: snapshot.ready, domain: "int [0, n]"}
    - {name: f, expr: snapshot.f, domain: "int [0, n]"}
    - {name: role, expr: snapshot.role, domain: 'enum ["Leader", "Member"]'}
    - {name: backup, expr: snapshot.backup, domain: bool}
    - {name: quorate, expr: 2 * ready > n}
    - {name: h, expr: snapshot.h, domain: "int [0, 6]"}
  constraints:
    - ready + f <= n
  invariants:
    - 'steps.all(s, s.params == {"replicas": 0}) || h > 3'
    - '!("ScaleStatefulSet" in actions) || 2 * f >= n'
  rules:
    - id: lost
      priority: 5
      when: {quorate: false, f: "2 * f >= n", backup: true}
      then: [{action: ScaleStatefulSet, params: {replicas: "n - ready"}}]
    - id: alert
      priority: 5
      when: {quorate: false, backup: false}
      condition: n > 0 || h > limit
    - id: leader
      priority: 1
      when: {role: '"Leader"', h: "> 2"}
    - id: member
      priority: 2
      when: {role: 'in ["Member"]', ready: "[1..n]"}
    - id: rest
      when: {h: "<= limit"}
)";
  auto compiled = Compile(spec);
  ASSERT_TRUE(compiled);
  ExpectPruningIsExact(compiled);
  auto unique = Compile(std::string(spec).replace(spec.find("PRIORITY"), 8, "UNIQUE"));
  ASSERT_TRUE(unique);
  ExpectPruningIsExact(unique);
}

TEST(RuleSetDiffTest, ListsTheStatesTwoVersionsDecideDifferently) {
  auto before = Compile(QuorumTable("FIRST", std::string(kHealthy) + kDegraded + kLost));
  const std::string lost_too_early = R"(    - id: lost
      when: {ready: "ready <= n / 2 + 1"}
      then: [{action: ScaleStatefulSet, params: {replicas: 0}}]
)";
  auto after = Compile(QuorumTable("FIRST", std::string(kHealthy) + lost_too_early + kDegraded));
  ASSERT_TRUE(before && after);
  VerificationReport report = DiffRuleSets(before, after, {});
  ASSERT_EQ(report.findings.size(), 1u) << FormatVerificationReport(report, 0);
  EXPECT_EQ(report.findings[0].message, "old selects 'degraded', new selects 'lost'");
  EXPECT_EQ(report.findings[0].states, 3u);
  EXPECT_EQ(report.states, 20u);
  EXPECT_TRUE(DiffRuleSets(before, before, {}).findings.empty());
}

TEST(RuleSetDiffTest, SameRuleWithOtherActionsIsADifference) {
  auto before = Compile(QuorumTable("FIRST", std::string(kHealthy) + kDegraded + kLost));
  std::string other_lost = kLost;
  other_lost.replace(other_lost.find("replicas: 0"), 11, "replicas: n");
  auto after = Compile(QuorumTable("FIRST", std::string(kHealthy) + kDegraded + other_lost));
  ASSERT_TRUE(before && after);
  VerificationReport report = DiffRuleSets(before, after, {});
  ASSERT_EQ(report.findings.size(), 1u) << FormatVerificationReport(report, 0);
  EXPECT_EQ(report.findings[0].message, "'lost' with different actions");
  EXPECT_EQ(report.findings[0].states, 11u);
}

TEST(RegionTest, MergesBoxesThatDifferInOneAxis) {
  auto box = [](int64_t a, int64_t b) {
    Region region;
    region.axes = {RegionAxis::Of({Value::Int(a)}), RegionAxis::Of({Value::Int(b)})};
    region.states = 1;
    region.example = {Value::Int(a), Value::Int(b)};
    return region;
  };
  std::vector<Region> regions = {box(1, 1), box(1, 2), box(2, 1), box(2, 2), box(3, 1), box(5, 1)};
  std::vector<std::optional<std::vector<Value>>> domains = {std::nullopt,
                                                            std::vector<Value>{Value::Int(1), Value::Int(2)}};
  std::vector<Region> merged = MergeRegions(regions, domains);
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(FormatRegion(merged[0], {"a", "b"}, {0, 1}), "a in {1, 2}");
  EXPECT_EQ(merged[0].states, 4u);
  EXPECT_EQ(FormatRegion(merged[1], {"a", "b"}, {0, 1}), "a in {3, 5}, b=1");
  EXPECT_EQ(FormatExample(merged[1], {"a", "b"}, {0, 1}), "a=3, b=1");
}

}  // namespace
}  // namespace ruleplane
