// Differential test: the compiled matcher (column indexes, slot-vs-slot
// predicates, fallbacks) against the naive ReferenceEvaluator, on random
// decision tables and random fact vectors, for every hit policy.
//
// Deterministic: the seed is printed; RULEPLANE_DIFFERENTIAL_SEED changes it,
// RULEPLANE_DIFFERENTIAL_VECTORS the number of fact vectors per hit policy.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/match/compiled_rule_set.h"
#include "tests/reference_evaluator.h"
#include "tests/rule_set_builder.h"

// The test binary is globbed from tests/*_test.cpp, so the reference
// evaluator's implementation is compiled here, in its only user.
#include "tests/reference_evaluator.cpp"  // NOLINT(bugprone-suspicious-include)

namespace ruleplane::testing {
namespace {

constexpr uint64_t kDefaultSeed = 20240501;
constexpr int kDefaultVectorsPerPolicy = 100000;
constexpr int kVectorsPerRuleSet = 100;

uint64_t EnvNumber(const char* name, uint64_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  return std::strtoull(text, nullptr, 10);
}

// splitmix64: small, fast and identical on every platform.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  int Uniform(int low, int high) {
    return low + static_cast<int>(Next() % static_cast<uint64_t>(high - low + 1));
  }
  bool Chance(int percent) { return Uniform(0, 99) < percent; }
  template <typename T>
  T Pick(const std::vector<T>& items) {
    return items[Uniform(0, static_cast<int>(items.size()) - 1)];
  }

 private:
  uint64_t state_;
};

enum class FactKind { kInt, kBool, kString };

const std::vector<std::string> kStrings = {"Leader", "Member", "", "x", "Learner"};
const std::vector<std::string> kStringLiterals = {R"("Leader")", R"("Member")", R"("")",
                                                  R"("x")",      R"("M")",      R"("Lz")"};
const std::vector<CompareOp> kOps = {CompareOp::kEq, CompareOp::kNe, CompareOp::kLt,
                                     CompareOp::kLe, CompareOp::kGt, CompareOp::kGe};

// One random decision table: its facts' kinds and the built rule set.
struct RandomTable {
  std::vector<FactKind> kinds;
  std::vector<std::string> names;
  std::shared_ptr<const RuleSet> rule_set;
};

class TableGenerator {
 public:
  TableGenerator(Random& random, HitPolicy policy) : random_(random), policy_(policy) {}

  RandomTable Generate() {
    RandomTable table;
    const int fact_count = random_.Uniform(2, 6);
    for (int f = 0; f < fact_count; ++f) {
      const int roll = random_.Uniform(0, 9);
      const FactKind kind = roll < 6 ? FactKind::kInt : (roll < 8 ? FactKind::kBool : FactKind::kString);
      table.kinds.push_back(kind);
      table.names.push_back(std::string(kind == FactKind::kInt    ? "i"
                                        : kind == FactKind::kBool ? "b"
                                                                  : "s") +
                            std::to_string(f));
    }
    kinds_ = &table.kinds;
    names_ = &table.names;
    error_prone_ = random_.Chance(15);

    RuleSetBuilder builder(policy_);
    for (const std::string& name : table.names) builder.Fact(name);
    builder.Param("p0", ParamType::kInt, Value::Int(2));
    const std::vector<std::vector<ActionSketch>> actions = {
        {{"SetCondition", R"("Ready")", {{"status", "true"}}}},
        {{"ScaleStatefulSet", R"("etcd-main")", {{"replicas", "p0"}}}},
        {{"SetCondition", R"("Ready")", {{"status", "false"}}}, {"RaiseAlert", "", {}}},
        {{"SetCondition", R"("Ready")", {{"status", "false"}}}},
        {{"SetCondition", R"("AllMembersReady")", {{"status", "true"}}}},
    };
    // One table in ten has more than 64 rules, so that bitsets span several words.
    const int rule_count = random_.Chance(10) ? random_.Uniform(65, 140) : random_.Uniform(1, 12);
    for (int r = 0; r < rule_count; ++r) {
      std::vector<CellSpec> cells;
      for (int f = 0; f < fact_count; ++f) {
        if (random_.Chance(45)) cells.push_back(RandomCell(f));
        if (random_.Chance(3)) cells.push_back(RandomCell(f));  // a second test of the same column
      }
      const std::string condition = random_.Chance(25) ? RandomCondition() : "";
      builder.Rule("r" + std::to_string(r), cells, condition, random_.Uniform(0, 3), random_.Pick(actions));
    }
    auto built = builder.Build();
    EXPECT_TRUE(built.ok()) << built.error().message;
    if (built.ok()) table.rule_set = *built;
    return table;
  }

 private:
  std::string Literal(FactKind kind) {
    switch (kind) {
      case FactKind::kInt:
        return random_.Chance(10) ? random_.Pick<std::string>({"2.5", "3.0", "-0.5"})
                                  : std::to_string(random_.Uniform(-1, 6));
      case FactKind::kBool:
        return random_.Chance(50) ? "true" : "false";
      case FactKind::kString:
        return random_.Pick(kStringLiterals);
    }
    return "null";
  }

  // Another fact of the same kind (or the int param), if any.
  std::optional<std::string> Other(int fact) {
    std::vector<std::string> candidates;
    for (size_t f = 0; f < kinds_->size(); ++f) {
      if (static_cast<int>(f) != fact && (*kinds_)[f] == (*kinds_)[fact]) candidates.push_back((*names_)[f]);
    }
    if ((*kinds_)[fact] == FactKind::kInt) candidates.push_back("p0");
    if (candidates.empty()) return std::nullopt;
    return random_.Pick(candidates);
  }

  std::string Set(FactKind kind) {
    std::string list = "[";
    const int size = random_.Uniform(0, 3);
    for (int i = 0; i < size; ++i) list += (i > 0 ? ", " : "") + Literal(kind);
    if (error_prone_ && random_.Chance(20)) list += std::string(size > 0 ? ", " : "") + R"("x", 1)";
    return list + "]";
  }

  CellSpec RandomCell(int fact) {
    const std::string& name = (*names_)[fact];
    const FactKind kind = (*kinds_)[fact];
    const std::optional<std::string> other = Other(fact);
    if (error_prone_ && random_.Chance(10)) {
      // Ordering across kinds: an evaluation error whenever nothing else in the rule is false.
      return Cmp(name, random_.Pick(kOps), kind == FactKind::kInt ? R"("a")" : "1");
    }
    const int roll = random_.Uniform(0, 9);
    switch (roll) {
      case 0:
      case 1:
        return Cmp(name, random_.Pick(kOps), Literal(kind));
      case 2: {
        std::string low = Literal(kind), high = Literal(kind);
        if (random_.Chance(70) && kind != FactKind::kBool && low > high) std::swap(low, high);
        return Range(name, low, high, random_.Chance(50), random_.Chance(50));
      }
      case 3:
        return In(name, Set(kind));
      case 4:
        if (other) return Cmp(name, random_.Pick(kOps), *other);
        return Cmp(name, CompareOp::kEq, Literal(kind));
      case 5:
        if (other && kind != FactKind::kBool) {
          return random_.Chance(50) ? Range(name, Literal(kind), *other, true, random_.Chance(50))
                                    : Range(name, *other, Literal(kind), random_.Chance(50), true);
        }
        return Range(name, Literal(kind), Literal(kind), true, true);
      case 6:
        if (other) return In(name, "[" + *other + ", " + Literal(kind) + "]");
        return In(name, Set(kind));
      case 7:
        if (kind == FactKind::kInt) {
          return Cmp(name, random_.Pick(kOps),
                     (other ? *other : "p0") + " + " + std::to_string(random_.Uniform(-1, 2)));
        }
        return Cmp(name, CompareOp::kNe, Literal(kind));
      default:
        return Expr(name, RandomExpression(fact));
    }
  }

  // A boolean expression that names the fact itself.
  std::string RandomExpression(int fact) {
    const std::string& name = (*names_)[fact];
    const std::string other = Other(fact).value_or(name);
    switch ((*kinds_)[fact]) {
      case FactKind::kInt:
        return random_.Pick<std::string>(
            {"2 * " + name + " < " + other, name + " % 2 == 0", name + " + " + other + " > 3",
             name + " != " + other + " || " + other + " > 2", "2 * " + name + " >= p0"});
      case FactKind::kBool:
        return random_.Pick<std::string>(
            {name + " || " + other, "!" + name, name + " && p0 > 1", name + " == " + other});
      case FactKind::kString:
        return random_.Pick<std::string>({name + R"(.startsWith("L"))", "size(" + name + ") > 2",
                                          name + " == " + other + R"( || )" + name + R"( == "x")"});
    }
    return "true";
  }

  std::string RandomCondition() {
    std::vector<std::string> ints = {"p0"}, bools, strings;
    for (size_t f = 0; f < kinds_->size(); ++f) {
      const std::string& name = (*names_)[f];
      if ((*kinds_)[f] == FactKind::kInt) ints.push_back(name);
      if ((*kinds_)[f] == FactKind::kBool) bools.push_back(name);
      if ((*kinds_)[f] == FactKind::kString) strings.push_back(name);
    }
    std::vector<std::string> conditions = {random_.Pick(ints) + " + " + random_.Pick(ints) + " > 3",
                                           "2 * " + random_.Pick(ints) + " >= " + random_.Pick(ints)};
    if (!bools.empty()) conditions.push_back(random_.Pick(bools) + " || " + random_.Pick(ints) + " > 2");
    if (!strings.empty()) conditions.push_back("size(" + random_.Pick(strings) + ") < 5");
    if (error_prone_) conditions.push_back(random_.Pick(ints) + " / (" + random_.Pick(ints) + " - 2) > 0");
    return random_.Pick(conditions);
  }

  Random& random_;
  HitPolicy policy_;
  const std::vector<FactKind>* kinds_ = nullptr;
  const std::vector<std::string>* names_ = nullptr;
  bool error_prone_ = false;
};

Value RandomValue(Random& random, FactKind kind) {
  if (random.Chance(3)) {
    // A value of another kind: exercises classification and the fallbacks.
    switch (random.Uniform(0, 8)) {
      case 0:
        return Value::Double(2.5);
      case 1:
        return Value::Double(3.0);
      case 2:
        return Value::Double(std::numeric_limits<double>::quiet_NaN());
      case 3:
        return Value::String("x");
      case 4:
        return Value::Bool(true);
      case 5:
        return Value::Int(4);
      case 6:
        return Value::MakeList({Value::Int(1)});
      case 7:
        return Value::MakeDuration(Duration{1000});
      default:
        return Value::Null();
    }
  }
  switch (kind) {
    case FactKind::kInt:
      return Value::Int(random.Uniform(-1, 6));
    case FactKind::kBool:
      return Value::Bool(random.Chance(50));
    case FactKind::kString:
      return Value::String(random.Pick(kStrings));
  }
  return Value::Null();
}

std::string Describe(const RandomTable& table, const expr::Frame& frame) {
  std::ostringstream out;
  const RuleSet& rule_set = *table.rule_set;
  out << "hit policy " << HitPolicyName(rule_set.hit_policy) << "\n";
  for (const Rule& rule : rule_set.rules) {
    out << "  " << rule.id << " (priority " << rule.priority << "):";
    for (const Cell& cell : rule.cells)
      out << "  " << rule_set.facts[cell.fact].name << ": " << cell.text << ";";
    if (rule.condition) out << "  condition: " << rule.condition->text;
    out << "\n";
  }
  out << "  frame:";
  for (size_t f = 0; f < rule_set.facts.size(); ++f)
    out << " " << rule_set.facts[f].name << "=" << frame[f].DebugString();
  out << " p0=" << frame[rule_set.facts.size()].DebugString() << "\n";
  return out.str();
}

std::string Ids(const RuleSet& rule_set, const std::vector<int>& rules) {
  std::string text;
  for (const int rule : rules) text += (text.empty() ? "" : ",") + rule_set.rules[rule].id;
  return "[" + text + "]";
}

// Compares one outcome of the compiled matcher with the reference's; returns
// a description of the difference, or "" when they agree.
std::string Difference(const RuleSet& rule_set, const Result<Decision>& compiled,
                       const ReferenceEvaluator::Outcome& expected) {
  if (expected.error_rule) {
    if (compiled.ok()) {
      return "reference: error in rule " + *expected.error_rule + " (" + expected.error +
             "); compiled matched " + Ids(rule_set, compiled->matched);
    }
    if (compiled.error().message.find("rule '" + *expected.error_rule + "'") == std::string::npos) {
      return "reference: error in rule " + *expected.error_rule + " (" + expected.error +
             "); compiled: " + compiled.error().message;
    }
    return "";
  }
  if (!compiled.ok())
    return "reference matched " + Ids(rule_set, expected.matched) + "; compiled: " + compiled.error().message;
  if (compiled->matched != expected.matched) {
    return "matched: reference " + Ids(rule_set, expected.matched) + ", compiled " +
           Ids(rule_set, compiled->matched);
  }
  if (compiled->violation.has_value() != expected.violation) {
    return std::string("violation: reference ") + (expected.violation ? "yes" : "no") + ", compiled " +
           (compiled->violation ? compiled->violation->message : "no");
  }
  if (compiled->selected != expected.selected) {
    return "selected: reference " + Ids(rule_set, expected.selected) + ", compiled " +
           Ids(rule_set, compiled->selected);
  }
  return "";
}

class DifferentialTest : public ::testing::TestWithParam<HitPolicy> {};

TEST_P(DifferentialTest, CompiledMatcherAgreesWithReference) {
  const HitPolicy policy = GetParam();
  const uint64_t seed = EnvNumber("RULEPLANE_DIFFERENTIAL_SEED", kDefaultSeed);
  const int vectors = static_cast<int>(EnvNumber("RULEPLANE_DIFFERENTIAL_VECTORS", kDefaultVectorsPerPolicy));
  std::cout << "differential seed " << seed << " (RULEPLANE_DIFFERENTIAL_SEED), " << vectors
            << " fact vectors for hit policy " << HitPolicyName(policy) << "\n";
  Random random(seed * 31 + static_cast<uint64_t>(policy));

  int checked = 0, errors = 0, violations = 0, nonempty = 0;
  while (checked < vectors) {
    TableGenerator generator(random, policy);
    const RandomTable table = generator.Generate();
    ASSERT_NE(table.rule_set, nullptr);
    auto compiled = CompiledRuleSet::Compile(table.rule_set);
    ASSERT_TRUE(compiled.ok()) << compiled.error().message;
    auto reference = ReferenceEvaluator::Build(table.rule_set);
    ASSERT_TRUE(reference.ok()) << reference.error().message;
    const FrameLayout& layout = (*compiled)->layout();

    for (int v = 0; v < kVectorsPerRuleSet && checked < vectors; ++v, ++checked) {
      expr::Frame frame((*compiled)->frame_size());
      for (size_t f = 0; f < table.kinds.size(); ++f)
        frame[layout.fact_slot(f)] = RandomValue(random, table.kinds[f]);
      frame[layout.param_slot(0)] = Value::Int(random.Uniform(-1, 6));
      frame[layout.now_slot()] = Value::MakeTimestamp(Timestamp{1714557600});

      const ReferenceEvaluator::Outcome expected = reference->Evaluate(frame);
      const Result<Decision> decision = (*compiled)->Match(frame);
      std::string difference = Difference(*table.rule_set, decision, expected);
      if (difference.empty() && checked % 64 == 0) {
        const Result<Decision> traced = (*compiled)->Match(frame, /*trace=*/true);
        difference = Difference(*table.rule_set, traced, expected);
        if (!difference.empty()) difference = "with trace: " + difference;
      }
      if (!difference.empty()) {
        FAIL() << "seed " << seed << ", fact vector " << checked << ": " << difference << "\n"
               << Describe(table, frame);
      }
      errors += expected.error_rule.has_value();
      violations += expected.violation;
      nonempty += !expected.matched.empty();
    }
  }
  std::cout << "  " << checked << " vectors: " << nonempty << " with matches, " << violations
            << " violations, " << errors << " evaluation errors\n";
  // The generator must exercise every outcome, or the comparison proves little.
  EXPECT_GT(nonempty, vectors / 10);
  EXPECT_GT(errors, 0);
  if (policy == HitPolicy::kUnique || policy == HitPolicy::kAny) {
    EXPECT_GT(violations, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(AllHitPolicies, DifferentialTest,
                         ::testing::Values(HitPolicy::kUnique, HitPolicy::kAny, HitPolicy::kFirst,
                                           HitPolicy::kPriority, HitPolicy::kRuleOrder, HitPolicy::kCollect),
                         [](const ::testing::TestParamInfo<HitPolicy>& info) {
                           std::string name = HitPolicyName(info.param);
                           name.erase(std::remove(name.begin(), name.end(), '_'), name.end());
                           return name;
                         });

}  // namespace
}  // namespace ruleplane::testing
