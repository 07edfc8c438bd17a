// ruleplane verify and diff on small tables: every kind of finding, the
// counts of states, and the pruned enumeration checked state by state
// against the unpruned one.
#include "engine/verify/verifier.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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
    one.interesting_rules = {std::vector<bool>(rule_count, false)};
    one.interesting_rules[0][rule] = true;
    one.triage = [rule](const std::vector<TablePoint>& p) {
      if (p[0].rules[rule] == Tri::kFalse) return Triage::kSkip;
      return p[0].rules[rule] == Tri::kTrue ? Triage::kSettled : Triage::kContinue;
    };
    (*enumerator)->Run(one, [&](const EnumeratedRegion& r) { found += r.region.states; });
    EXPECT_EQ(found, expected) << "rule " << rule;
  }
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
