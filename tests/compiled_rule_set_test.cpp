// Unit tests of CompiledRuleSet: every cell kind through the column index and
// through the fallback, the hit policies, params, fact derivation, the trace,
// and evaluation from several threads.
#include "engine/match/compiled_rule_set.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "engine/common/json_value.h"
#include "engine/common/snapshot.h"
#include "engine/match/cell_predicate.h"
#include "engine/match/column_index.h"
#include "engine/rule_file/rule_loader.h"
#include "tests/rule_set_builder.h"

namespace ruleplane {
namespace {

using testing::Cmp;
using testing::Expr;
using testing::In;
using testing::Range;
using testing::RuleSetBuilder;

std::shared_ptr<const CompiledRuleSet> CompileOrFail(const RuleSetBuilder& builder) {
  auto rule_set = builder.Build();
  EXPECT_TRUE(rule_set.ok()) << rule_set.error().message;
  if (!rule_set.ok()) return nullptr;
  auto compiled = CompiledRuleSet::Compile(*rule_set);
  EXPECT_TRUE(compiled.ok()) << compiled.error().message;
  return compiled.ok() ? *compiled : nullptr;
}

// A frame with the given facts and params (unset params keep their defaults
// only through DeriveFacts; here they are null unless given).
expr::Frame FrameOf(const CompiledRuleSet& compiled, const std::vector<Value>& facts,
                    const std::vector<Value>& params = {}) {
  expr::Frame frame(compiled.frame_size());
  for (size_t f = 0; f < facts.size(); ++f)
    frame[compiled.layout().fact_slot(static_cast<int>(f))] = facts[f];
  for (size_t p = 0; p < params.size(); ++p)
    frame[compiled.layout().param_slot(static_cast<int>(p))] = params[p];
  return frame;
}

std::vector<std::string> Ids(const CompiledRuleSet& compiled, const std::vector<int>& rules) {
  std::vector<std::string> ids;
  for (const int rule : rules) ids.push_back(compiled.rule_set().rules[rule].id);
  return ids;
}

std::vector<std::string> Matched(const CompiledRuleSet& compiled, std::vector<Value> facts,
                                 std::vector<Value> params = {}) {
  expr::Frame frame = FrameOf(compiled, facts, params);
  auto decision = compiled.Match(frame);
  EXPECT_TRUE(decision.ok()) << decision.error().message;
  if (!decision.ok()) return {"<error>"};
  return Ids(compiled, decision->matched);
}

using IdList = std::vector<std::string>;

// --- the column index ----------------------------------------------------

// Builds the index of one column from `cells` (one rule each) and checks that
// it agrees with testing each cell directly, for every value in `values`.
// Returns how many values the index answered (the others must fall back).
int CheckIndexAgainstCells(const std::vector<testing::CellSpec>& specs, const std::vector<Value>& values) {
  RuleSetBuilder builder(HitPolicy::kCollect);
  builder.Fact("x");
  for (size_t r = 0; r < specs.size(); ++r) builder.Rule("r" + std::to_string(r), {specs[r]});
  auto rule_set = builder.Build();
  EXPECT_TRUE(rule_set.ok()) << rule_set.error().message;
  if (!rule_set.ok()) return -1;
  std::vector<CellPredicate> cells;
  for (size_t r = 0; r < specs.size(); ++r) {
    auto cell = CellPredicate::Compile(**rule_set, static_cast<int>(r), 0, {"x", "snapshot", "now"});
    EXPECT_TRUE(cell.ok() && cell->literal()) << testing::CellText(specs[r]);
    if (!cell.ok()) return -1;
    cells.push_back(*cell);
  }
  std::vector<const CellPredicate*> pointers;
  for (const CellPredicate& cell : cells) pointers.push_back(&cell);
  const ColumnIndex index(0, pointers, static_cast<int>(cells.size()));

  expr::Frame no_frame;
  int answered = 0;
  for (const Value& value : values) {
    const uint64_t* bits = index.Lookup(value);
    bool any_error = false;
    for (const CellPredicate& cell : cells) any_error = any_error || cell.Test(value, no_frame).is_error();
    if (bits == nullptr) {
      // Only a value that some cell cannot be evaluated on may fall back.
      EXPECT_TRUE(any_error) << value.DebugString();
      continue;
    }
    ++answered;
    for (size_t r = 0; r < cells.size(); ++r) {
      const Value expected = cells[r].Test(value, no_frame);
      EXPECT_TRUE(expected.is_bool()) << value.DebugString();
      EXPECT_EQ(((bits[r / 64] >> (r % 64)) & 1) != 0, expected.is_bool() && expected.bool_value())
          << "value " << value.DebugString() << ", cell " << testing::CellText(specs[r]);
    }
  }
  return answered;
}

// Values on each constant, between constants and beyond both ends.
TEST(ColumnIndexTest, NumbersInEveryRegion) {
  const std::vector<testing::CellSpec> cells = {Cmp("x", CompareOp::kEq, "3"),
                                                Cmp("x", CompareOp::kNe, "3"),
                                                Cmp("x", CompareOp::kLt, "3"),
                                                Cmp("x", CompareOp::kLe, "3"),
                                                Cmp("x", CompareOp::kGt, "2.5"),
                                                Cmp("x", CompareOp::kGe, "-1"),
                                                Range("x", "1", "4", true, true),
                                                Range("x", "1", "4", false, false),
                                                In("x", "[0, 5, 7.5]"),
                                                Cmp("x", CompareOp::kEq, R"("three")"),
                                                In("x", R"(["a", 6])")};
  std::vector<Value> values;
  for (int i = -3; i <= 9; ++i) values.push_back(Value::Int(i));
  for (double d : {-1e300, -1.0, -0.5, 2.5, 2.75, 3.0, 3.5, 4.0, 7.5, 1e300})
    values.push_back(Value::Double(d));
  values.push_back(Value::Int(std::numeric_limits<int64_t>::min()));
  values.push_back(Value::Int(std::numeric_limits<int64_t>::max()));
  EXPECT_EQ(CheckIndexAgainstCells(cells, values), static_cast<int>(values.size()));
}

TEST(ColumnIndexTest, StringsBoolsAndDurationsInEveryRegion) {
  const std::vector<testing::CellSpec> strings = {
      Cmp("x", CompareOp::kEq, R"("Leader")"), In("x", R"(["Leader", "Member"])"),
      Range("x", R"("")", R"("M")", true, false), Cmp("x", CompareOp::kGt, R"("Lz")"),
      Cmp("x", CompareOp::kNe, "1")};
  const std::vector<Value> string_values = {
      Value::String(""),   Value::String("A"), Value::String("Leader"), Value::String("Leaders"),
      Value::String("Lz"), Value::String("M"), Value::String("Member"), Value::String("zz")};
  EXPECT_EQ(CheckIndexAgainstCells(strings, string_values), static_cast<int>(string_values.size()));

  const std::vector<testing::CellSpec> bools = {Cmp("x", CompareOp::kEq, "true"),
                                                Cmp("x", CompareOp::kNe, "true"), In("x", "[false]"),
                                                Cmp("x", CompareOp::kLt, "true")};
  EXPECT_EQ(CheckIndexAgainstCells(bools, {Value::Bool(true), Value::Bool(false)}), 2);

  const std::vector<testing::CellSpec> durations = {
      Cmp("x", CompareOp::kLt, R"(duration("5m"))"),
      Range("x", R"(duration("1m"))", R"(duration("10m"))", false, true)};
  std::vector<Value> duration_values;
  for (int64_t seconds : {0, 60, 61, 299, 300, 301, 600, 601}) {
    duration_values.push_back(Value::MakeDuration(Duration{seconds * 1'000'000'000}));
  }
  EXPECT_EQ(CheckIndexAgainstCells(durations, duration_values), static_cast<int>(duration_values.size()));
}

// Ordering cells cannot be evaluated on values of another kind: those fall back.
TEST(ColumnIndexTest, MixedKindsFallBackWhereACellFails) {
  const std::vector<testing::CellSpec> cells = {Cmp("x", CompareOp::kLt, "3"),
                                                Cmp("x", CompareOp::kEq, R"("a")")};
  EXPECT_EQ(
      CheckIndexAgainstCells(cells, {Value::Int(1), Value::Int(4), Value::String("a"), Value::Bool(true)}),
      2);
}

TEST(ColumnIndexTest, FallsBackForValuesItCannotClassify) {
  RuleSetBuilder builder(HitPolicy::kCollect);
  builder.Fact("x").Rule("eq", {Cmp("x", CompareOp::kEq, "3")}).Rule("in", {In("x", R"(["a"])")});
  auto rule_set = builder.Build();
  ASSERT_TRUE(rule_set.ok()) << rule_set.error().message;
  auto eq = CellPredicate::Compile(**rule_set, 0, 0, {"x", "snapshot", "now"});
  auto in = CellPredicate::Compile(**rule_set, 1, 0, {"x", "snapshot", "now"});
  ASSERT_TRUE(eq.ok() && in.ok());
  const ColumnIndex index(0, {&*eq, &*in}, 2);
  EXPECT_EQ(index.Lookup(Value::Null()), nullptr);
  EXPECT_EQ(index.Lookup(Value::MakeList({Value::Int(3)})), nullptr);
  EXPECT_EQ(index.Lookup(Value::Double(std::numeric_limits<double>::quiet_NaN())), nullptr);
  EXPECT_EQ(index.Lookup(Value::Error("boom")), nullptr);
  // Equality never fails, so other kinds are answered: no rule holds for them.
  const uint64_t* for_bool = index.Lookup(Value::Bool(true));
  ASSERT_NE(for_bool, nullptr);
  EXPECT_EQ(for_bool[0], 0u);
  const uint64_t* for_a = index.Lookup(Value::String("a"));
  ASSERT_NE(for_a, nullptr);
  EXPECT_EQ(for_a[0], 2u);
}

// --- cells through the compiled matcher ----------------------------------

TEST(CompiledRuleSetTest, LiteralCellsOfEveryKind) {
  RuleSetBuilder builder(HitPolicy::kCollect);
  builder.Fact("n").Fact("role").Fact("ok");
  builder.Rule("positive", {Cmp("n", CompareOp::kGt, "0")})
      .Rule("three", {Cmp("n", CompareOp::kEq, "3")})
      .Rule("one-to-three", {Range("n", "1", "3", true, false)})
      .Rule("odd-small", {In("n", "[1, 3, 5]")})
      .Rule("leader", {Cmp("role", CompareOp::kEq, R"("Leader")")})
      .Rule("voter", {In("role", R"({"Leader": 1, "Member": 2})")})
      .Rule("ok", {Cmp("ok", CompareOp::kEq, "true")})
      .Rule("all", {Cmp("n", CompareOp::kGe, "3"), Cmp("role", CompareOp::kNe, R"("Learner")"),
                    Cmp("ok", CompareOp::kEq, "false")});
  auto compiled = CompileOrFail(builder);
  ASSERT_NE(compiled, nullptr);
  EXPECT_EQ(Matched(*compiled, {Value::Int(0), Value::String("Learner"), Value::Bool(false)}), IdList{});
  EXPECT_EQ(Matched(*compiled, {Value::Int(1), Value::String("Member"), Value::Bool(true)}),
            (IdList{"positive", "one-to-three", "odd-small", "voter", "ok"}));
  EXPECT_EQ(Matched(*compiled, {Value::Int(3), Value::String("Leader"), Value::Bool(false)}),
            (IdList{"positive", "three", "odd-small", "leader", "voter", "all"}));
  EXPECT_EQ(Matched(*compiled, {Value::Double(3.0), Value::String("x"), Value::Bool(false)}),
            (IdList{"positive", "three", "odd-small", "all"}));
  EXPECT_EQ(Matched(*compiled, {Value::Double(2.5), Value::String("x"), Value::Bool(true)}),
            (IdList{"positive", "one-to-three", "ok"}));
}

TEST(CompiledRuleSetTest, ValuesTheIndexCannotClassifyAreEvaluatedDirectly) {
  RuleSetBuilder builder(HitPolicy::kCollect);
  builder.Fact("x");
  builder.Rule("pair", {Cmp("x", CompareOp::kEq, "[1, 2]")})
      .Rule("not-three", {Cmp("x", CompareOp::kNe, "3")})
      .Rule("in-lists", {In("x", "[[1, 2], [3]]")})
      .Rule("null", {Cmp("x", CompareOp::kEq, "null")});
  auto compiled = CompileOrFail(builder);
  ASSERT_NE(compiled, nullptr);
  EXPECT_EQ(Matched(*compiled, {Value::MakeList({Value::Int(1), Value::Int(2)})}),
            (IdList{"pair", "not-three", "in-lists"}));
  EXPECT_EQ(Matched(*compiled, {Value::Null()}), (IdList{"not-three", "null"}));
  EXPECT_EQ(Matched(*compiled, {Value::Double(std::nan(""))}), IdList{"not-three"});
  EXPECT_EQ(Matched(*compiled, {Value::Int(3)}), IdList{});
}

TEST(CompiledRuleSetTest, NonLiteralCells) {
  RuleSetBuilder builder(HitPolicy::kCollect);
  builder.Param("limit", ParamType::kInt, Value::Int(2));
  builder.Fact("n").Fact("ready");
  builder.Rule("all-ready", {Cmp("ready", CompareOp::kEq, "n")})
      .Rule("some-missing", {Range("ready", "0", "n", true, false)})
      .Rule("over-limit", {Cmp("ready", CompareOp::kGt, "limit")})
      .Rule("one-short", {Cmp("ready", CompareOp::kEq, "n - 1")})
      .Rule("n-or-zero", {In("ready", "[n, 0]")})
      .Rule("majority", {Expr("ready", "2 * ready > n")});
  auto compiled = CompileOrFail(builder);
  ASSERT_NE(compiled, nullptr);
  EXPECT_EQ(Matched(*compiled, {Value::Int(3), Value::Int(3)}, {Value::Int(2)}),
            (IdList{"all-ready", "over-limit", "n-or-zero", "majority"}));
  EXPECT_EQ(Matched(*compiled, {Value::Int(3), Value::Int(2)}, {Value::Int(2)}),
            (IdList{"some-missing", "one-short", "majority"}));
  EXPECT_EQ(Matched(*compiled, {Value::Int(3), Value::Int(0)}, {Value::Int(5)}),
            (IdList{"some-missing", "n-or-zero"}));
}

TEST(CompiledRuleSetTest, CellErrorIsAnErrorOfTheMatchNamingRuleAndCell) {
  RuleSetBuilder builder(HitPolicy::kCollect);
  builder.Fact("n").Fact("role");
  builder.Rule("fine", {Cmp("n", CompareOp::kGt, "0")}).Rule("broken", {Cmp("role", CompareOp::kGt, "n")});
  auto compiled = CompileOrFail(builder);
  ASSERT_NE(compiled, nullptr);
  expr::Frame frame = FrameOf(*compiled, {Value::Int(3), Value::String("Leader")});
  auto decision = compiled->Match(frame);
  ASSERT_FALSE(decision.ok());
  EXPECT_EQ(decision.error().code, ErrorCode::kEvaluation);
  EXPECT_NE(decision.error().message.find("rule 'broken'"), std::string::npos) << decision.error().message;
  EXPECT_NE(decision.error().message.find("role: \"> n\""), std::string::npos) << decision.error().message;
  EXPECT_NE(decision.error().message.find("no matching overload"), std::string::npos)
      << decision.error().message;
  EXPECT_EQ(decision.error().position.file, "rules/test.yaml");
  EXPECT_GT(decision.error().position.line, 0);
}

TEST(CompiledRuleSetTest, FalseCellOutweighsAnErrorInTheSameRule) {
  RuleSetBuilder builder(HitPolicy::kCollect);
  builder.Fact("n").Fact("role");
  // The literal cell on n is false for n = 0; the error in the role cell must not surface.
  builder.Rule("guarded", {Cmp("role", CompareOp::kGt, "n"), Cmp("n", CompareOp::kGt, "0")});
  builder.Rule("guarded-by-condition", {Cmp("role", CompareOp::kGt, "1")}, "n > 0");
  auto compiled = CompileOrFail(builder);
  ASSERT_NE(compiled, nullptr);
  EXPECT_EQ(Matched(*compiled, {Value::Int(0), Value::String("Leader")}), IdList{});
}

TEST(CompiledRuleSetTest, ConditionMustHoldAndBeABool) {
  RuleSetBuilder builder(HitPolicy::kCollect);
  builder.Fact("n").Fact("ready");
  builder.Rule("quorate", {Cmp("n", CompareOp::kGt, "0")}, "2 * ready > n");
  builder.Rule("not-bool", {Cmp("n", CompareOp::kEq, "7")}, "ready + 1");
  auto compiled = CompileOrFail(builder);
  ASSERT_NE(compiled, nullptr);
  EXPECT_EQ(Matched(*compiled, {Value::Int(3), Value::Int(2)}), IdList{"quorate"});
  EXPECT_EQ(Matched(*compiled, {Value::Int(3), Value::Int(1)}), IdList{});
  expr::Frame frame = FrameOf(*compiled, {Value::Int(7), Value::Int(7)});
  auto decision = compiled->Match(frame);
  ASSERT_FALSE(decision.ok());
  EXPECT_NE(decision.error().message.find("rule 'not-bool', condition \"ready + 1\""), std::string::npos)
      << decision.error().message;
  EXPECT_NE(decision.error().message.find("must be a bool, got int"), std::string::npos)
      << decision.error().message;
}

// --- hit policies --------------------------------------------------------

// Three rules that all match n = 2; `lonely` matches n = 5 alone.
std::shared_ptr<const CompiledRuleSet> PolicyTable(HitPolicy policy, bool same_actions) {
  const testing::ActionSketch alert{"RaiseAlert", R"("etcd-main")", {{"reason", R"("x")"}}};
  const testing::ActionSketch other{"RaiseAlert", R"("etcd-main")", {{"reason", R"("y")"}}};
  RuleSetBuilder builder(policy);
  builder.Fact("n");
  builder.Rule("low", {Cmp("n", CompareOp::kLt, "3")}, "", 1, {alert});
  builder.Rule("two", {Cmp("n", CompareOp::kEq, "2")}, "", 5, {alert});
  builder.Rule("even", {Expr("n", "n % 2 == 0")}, "", 5, {same_actions ? alert : other});
  builder.Rule("lonely", {Cmp("n", CompareOp::kEq, "5")}, "", 0, {other});
  return CompileOrFail(builder);
}

struct PolicyOutcome {
  std::vector<std::string> matched, selected;
  std::string violation;
};

PolicyOutcome RunPolicy(HitPolicy policy, int n, bool same_actions = false) {
  auto compiled = PolicyTable(policy, same_actions);
  if (compiled == nullptr) return {};
  expr::Frame frame = FrameOf(*compiled, {Value::Int(n)});
  auto decision = compiled->Match(frame);
  EXPECT_TRUE(decision.ok()) << decision.error().message;
  if (!decision.ok()) return {};
  PolicyOutcome outcome{Ids(*compiled, decision->matched), Ids(*compiled, decision->selected), ""};
  if (decision->violation) {
    EXPECT_EQ(decision->violation->code, ErrorCode::kHitPolicyViolation);
    outcome.violation = decision->violation->message;
  }
  return outcome;
}

TEST(HitPolicyTest, Unique) {
  PolicyOutcome several = RunPolicy(HitPolicy::kUnique, 2);
  EXPECT_EQ(several.matched, (IdList{"low", "two", "even"}));
  EXPECT_TRUE(several.selected.empty());
  EXPECT_NE(several.violation.find("UNIQUE"), std::string::npos);
  EXPECT_NE(several.violation.find("'low', 'two', 'even'"), std::string::npos) << several.violation;
  PolicyOutcome one = RunPolicy(HitPolicy::kUnique, 5);
  EXPECT_EQ(one.selected, IdList{"lonely"});
  EXPECT_EQ(one.violation, "");
  PolicyOutcome none = RunPolicy(HitPolicy::kUnique, 7);
  EXPECT_TRUE(none.matched.empty());
  EXPECT_TRUE(none.selected.empty());
  EXPECT_EQ(none.violation, "");
}

TEST(HitPolicyTest, AnyAllowsSeveralMatchesOnlyWithIdenticalActions) {
  PolicyOutcome same = RunPolicy(HitPolicy::kAny, 2, /*same_actions=*/true);
  EXPECT_EQ(same.selected, IdList{"low"});
  EXPECT_EQ(same.violation, "");
  PolicyOutcome different = RunPolicy(HitPolicy::kAny, 2, /*same_actions=*/false);
  EXPECT_TRUE(different.selected.empty());
  EXPECT_NE(different.violation.find("'low' and 'even'"), std::string::npos) << different.violation;
}

TEST(HitPolicyTest, FirstPriorityRuleOrderCollect) {
  EXPECT_EQ(RunPolicy(HitPolicy::kFirst, 2).selected, IdList{"low"});
  // `two` and `even` share the highest priority: the earlier rule wins.
  EXPECT_EQ(RunPolicy(HitPolicy::kPriority, 2).selected, IdList{"two"});
  EXPECT_EQ(RunPolicy(HitPolicy::kPriority, 0).selected, IdList{"even"});
  EXPECT_EQ(RunPolicy(HitPolicy::kRuleOrder, 2).selected, (IdList{"low", "two", "even"}));
  EXPECT_EQ(RunPolicy(HitPolicy::kCollect, 2).selected, (IdList{"low", "two", "even"}));
  for (HitPolicy policy :
       {HitPolicy::kFirst, HitPolicy::kPriority, HitPolicy::kRuleOrder, HitPolicy::kCollect}) {
    const PolicyOutcome none = RunPolicy(policy, 7);
    EXPECT_TRUE(none.selected.empty());
    EXPECT_EQ(none.violation, "");
  }
}

// --- params and fact derivation ------------------------------------------

Snapshot MakeSnapshot(Value document, Value params = Value()) {
  Snapshot snapshot;
  snapshot.kind = "EtcdClusterSnapshot";
  snapshot.observed_at = Timestamp{1714557600};
  snapshot.document = std::move(document);
  snapshot.params = std::move(params);
  return snapshot;
}

Value Map(std::vector<std::pair<std::string, Value>> entries) {
  Value::Map map;
  for (auto& [key, value] : entries) map.emplace_back(Value::String(key), std::move(value));
  return Value::MakeMap(std::move(map));
}

TEST(ParamsTest, DefaultsThenSnapshotThenOverrides) {
  RuleSetBuilder builder(HitPolicy::kCollect);
  builder.Param("grace", ParamType::kDuration, Value::String("5m"))
      .Param("limit", ParamType::kInt, Value::Int(3))
      .Param("label", ParamType::kString, Value::String("a"));
  builder.Fact("g", "grace").Fact("l", "limit").Fact("s", "label");
  auto compiled = CompileOrFail(builder);
  ASSERT_NE(compiled, nullptr);

  auto defaults = compiled->DeriveFacts(MakeSnapshot(Map({})), {});
  ASSERT_TRUE(defaults.ok()) << defaults.error().message;
  EXPECT_EQ((*defaults)[0], Value::MakeDuration(Duration{300'000'000'000}));
  EXPECT_EQ((*defaults)[1], Value::Int(3));

  const Value snapshot_params = Map(
      {{"grace", Value::String("10m")}, {"limit", Value::Int(4)}, {"undeclared", Value::String("ignored")}});
  auto from_snapshot = compiled->DeriveFacts(MakeSnapshot(Map({}), snapshot_params), {});
  ASSERT_TRUE(from_snapshot.ok()) << from_snapshot.error().message;
  EXPECT_EQ((*from_snapshot)[0], Value::MakeDuration(Duration{600'000'000'000}));
  EXPECT_EQ((*from_snapshot)[1], Value::Int(4));
  EXPECT_EQ((*from_snapshot)[2], Value::String("a"));

  auto overridden = compiled->DeriveFacts(MakeSnapshot(Map({}), snapshot_params),
                                          {{"limit", Value::String("5")}, {"label", Value::String("b")}});
  ASSERT_TRUE(overridden.ok()) << overridden.error().message;
  EXPECT_EQ((*overridden)[0], Value::MakeDuration(Duration{600'000'000'000}));
  EXPECT_EQ((*overridden)[1], Value::Int(5));
  EXPECT_EQ((*overridden)[2], Value::String("b"));
}

TEST(ParamsTest, BadParamsAreErrors) {
  RuleSetBuilder builder(HitPolicy::kCollect);
  builder.Param("limit", ParamType::kInt, Value::Int(3));
  auto compiled = CompileOrFail(builder);
  ASSERT_NE(compiled, nullptr);
  auto unknown = compiled->DeriveFacts(MakeSnapshot(Map({})), {{"limt", Value::String("4")}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(unknown.error().message.find("unknown param 'limt'"), std::string::npos)
      << unknown.error().message;
  EXPECT_NE(unknown.error().message.find("declared: limit"), std::string::npos) << unknown.error().message;

  auto wrong_type = compiled->DeriveFacts(MakeSnapshot(Map({})), {{"limit", Value::String("four")}});
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_EQ(wrong_type.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(wrong_type.error().message.find("param 'limit'"), std::string::npos)
      << wrong_type.error().message;

  auto bad_snapshot = compiled->DeriveFacts(MakeSnapshot(Map({}), Map({{"limit", Value::Bool(true)}})), {});
  ASSERT_FALSE(bad_snapshot.ok());
  EXPECT_EQ(bad_snapshot.error().code, ErrorCode::kInvalidSnapshot);
}

TEST(ParamsTest, ConvertParamToEveryType) {
  auto convert = [](ParamType type, Value given) {
    Param param;
    param.name = "p";
    param.type = type;
    return ConvertParam(param, given);
  };
  EXPECT_EQ(*convert(ParamType::kBool, Value::String("true")), Value::Bool(true));
  EXPECT_EQ(*convert(ParamType::kBool, Value::Bool(false)), Value::Bool(false));
  EXPECT_FALSE(convert(ParamType::kBool, Value::String("yes")).ok());
  EXPECT_EQ(*convert(ParamType::kInt, Value::String("-12")), Value::Int(-12));
  EXPECT_EQ(*convert(ParamType::kInt, Value::Int(7)), Value::Int(7));
  EXPECT_FALSE(convert(ParamType::kInt, Value::String("1.5")).ok());
  EXPECT_FALSE(convert(ParamType::kInt, Value::String("99999999999999999999")).ok());
  const auto from_int = convert(ParamType::kDouble, Value::Int(2));
  ASSERT_TRUE(from_int.ok());
  EXPECT_TRUE(from_int->is_double());
  EXPECT_EQ(from_int->double_value(), 2.0);
  EXPECT_EQ(*convert(ParamType::kDouble, Value::String("0.25")), Value::Double(0.25));
  EXPECT_EQ(*convert(ParamType::kString, Value::String("x")), Value::String("x"));
  EXPECT_FALSE(convert(ParamType::kString, Value::Int(1)).ok());
  EXPECT_EQ(*convert(ParamType::kDuration, Value::String("1h30m")),
            Value::MakeDuration(Duration{5400'000'000'000}));
  EXPECT_FALSE(convert(ParamType::kDuration, Value::String("5 minutes")).ok());
  EXPECT_EQ(*convert(ParamType::kTimestamp, Value::String("1970-01-01T00:00:01Z")),
            Value::MakeTimestamp(Timestamp{1}));
  const auto bad_time = convert(ParamType::kTimestamp, Value::String("yesterday"));
  ASSERT_FALSE(bad_time.ok());
  EXPECT_EQ(bad_time.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(bad_time.error().message.find("param 'p'"), std::string::npos);
}

TEST(DeriveFactsTest, FactErrorNamesTheFactItsPositionAndTheMissingField) {
  RuleSetBuilder builder(HitPolicy::kCollect);
  builder.Fact("n", "snapshot.etcd.spec.replicas").Fact("ready", "snapshot.etcd.status.members.size()");
  auto compiled = CompileOrFail(builder);
  ASSERT_NE(compiled, nullptr);
  const Value document =
      Map({{"etcd", Map({{"spec", Map({{"replicas", Value::Int(3)}})}, {"status", Map({})}})}});
  auto frame = compiled->DeriveFacts(MakeSnapshot(document), {});
  ASSERT_FALSE(frame.ok());
  const Error& error = frame.error();
  EXPECT_EQ(error.code, ErrorCode::kInvalidSnapshot);
  const Fact& ready = compiled->rule_set().facts[1];
  const std::string where = "rules/test.yaml:" + std::to_string(ready.expression.position.line) + ":" +
                            std::to_string(ready.expression.position.column);
  EXPECT_EQ(error.message, "fact 'ready' (" + where + ") cannot be derived: no such key: members");
  EXPECT_EQ(error.position.line, ready.expression.position.line);
}

TEST(DeriveFactsTest, FillsParamsSnapshotNowAndFacts) {
  RuleSetBuilder builder(HitPolicy::kFirst);
  builder.Param("limit", ParamType::kInt, Value::Int(2));
  builder.Fact("n", "snapshot.replicas").Fact("big", "n > limit").Fact("t", "now");
  builder.Rule("big", {Cmp("big", CompareOp::kEq, "true")});
  auto compiled = CompileOrFail(builder);
  ASSERT_NE(compiled, nullptr);
  const Snapshot snapshot = MakeSnapshot(Map({{"replicas", Value::Int(3)}}));
  auto frame = compiled->DeriveFacts(snapshot, {});
  ASSERT_TRUE(frame.ok()) << frame.error().message;
  const FrameLayout& layout = compiled->layout();
  EXPECT_EQ((*frame)[layout.fact_slot(0)], Value::Int(3));
  EXPECT_EQ((*frame)[layout.fact_slot(1)], Value::Bool(true));
  EXPECT_EQ((*frame)[layout.fact_slot(2)], Value::MakeTimestamp(snapshot.observed_at));
  EXPECT_EQ((*frame)[layout.param_slot(0)], Value::Int(2));
  EXPECT_EQ((*frame)[layout.now_slot()], Value::MakeTimestamp(snapshot.observed_at));
  auto decision = compiled->Evaluate(snapshot, {{{"limit", Value::Int(5)}}, false});
  ASSERT_TRUE(decision.ok()) << decision.error().message;
  EXPECT_TRUE(decision->selected.empty());
  decision = compiled->Evaluate(snapshot, {});
  ASSERT_TRUE(decision.ok()) << decision.error().message;
  EXPECT_EQ(Ids(*compiled, decision->selected), IdList{"big"});
}

TEST(DeriveFactsTest, RefusesASnapshotOfAnotherSubject) {
  RuleSetBuilder builder(HitPolicy::kFirst);
  auto compiled = CompileOrFail(builder);
  ASSERT_NE(compiled, nullptr);
  Snapshot snapshot = MakeSnapshot(Map({}));
  snapshot.kind = "EtcdMemberInitSnapshot";
  auto frame = compiled->DeriveFacts(snapshot, {});
  ASSERT_FALSE(frame.ok());
  EXPECT_EQ(frame.error().code, ErrorCode::kInvalidSnapshot);
  EXPECT_NE(frame.error().message.find("EtcdMemberInitSnapshot"), std::string::npos);
}

// --- trace ---------------------------------------------------------------

TEST(TraceTest, RecordsEveryCellWithoutShortCircuit) {
  RuleSetBuilder builder(HitPolicy::kFirst);
  builder.Fact("n").Fact("ready").Fact("role");
  builder.Rule("quorum-lost", {Cmp("n", CompareOp::kGt, "0"), Expr("ready", "2 * ready <= n")});
  builder.Rule("healthy", {Cmp("ready", CompareOp::kEq, "n"), Cmp("role", CompareOp::kGt, "1")}, "n > 5");
  auto compiled = CompileOrFail(builder);
  ASSERT_NE(compiled, nullptr);
  expr::Frame frame = FrameOf(*compiled, {Value::Int(3), Value::Int(3), Value::String("Leader")});
  auto decision = compiled->Match(frame, /*trace=*/true);
  ASSERT_TRUE(decision.ok()) << decision.error().message;
  EXPECT_TRUE(decision->matched.empty());
  ASSERT_EQ(decision->trace.size(), 2u);

  const RuleTrace& first = decision->trace[0];
  EXPECT_EQ(first.rule, 0);
  EXPECT_FALSE(first.matched);
  ASSERT_EQ(first.cells.size(), 2u);
  EXPECT_EQ(first.cells[0].fact, 0);
  EXPECT_EQ(first.cells[0].text, "> 0");
  EXPECT_EQ(first.cells[0].fact_value, Value::Int(3));
  EXPECT_TRUE(first.cells[0].passed);
  EXPECT_EQ(first.cells[1].fact, 1);
  EXPECT_EQ(first.cells[1].text, "2 * ready <= n");
  EXPECT_FALSE(first.cells[1].passed);
  EXPECT_TRUE(first.cells[1].error.empty());

  // The role cell cannot be evaluated, and the false condition decides the
  // rule; every cell and the condition are still traced.
  const RuleTrace& second = decision->trace[1];
  EXPECT_FALSE(second.matched);
  ASSERT_EQ(second.cells.size(), 3u);
  EXPECT_TRUE(second.cells[0].passed);
  EXPECT_FALSE(second.cells[1].passed);
  EXPECT_NE(second.cells[1].error.find("no matching overload"), std::string::npos) << second.cells[1].error;
  EXPECT_EQ(second.cells[2].fact, -1);
  EXPECT_EQ(second.cells[2].text, "n > 5");
  EXPECT_FALSE(second.cells[2].passed);
  EXPECT_TRUE(second.cells[2].fact_value.is_null());
}

TEST(TraceTest, MatchesTheIndexedResult) {
  RuleSetBuilder builder(HitPolicy::kRuleOrder);
  builder.Fact("n").Fact("ready");
  builder.Rule("a", {Cmp("n", CompareOp::kEq, "3"), Range("ready", "0", "n", true, false)});
  builder.Rule("b", {Cmp("ready", CompareOp::kEq, "n")});
  builder.Rule("c", {In("n", "[1, 3]")}, "ready >= 1");
  auto compiled = CompileOrFail(builder);
  ASSERT_NE(compiled, nullptr);
  for (int n = 0; n < 5; ++n) {
    for (int ready = 0; ready < 5; ++ready) {
      expr::Frame frame = FrameOf(*compiled, {Value::Int(n), Value::Int(ready)});
      auto plain = compiled->Match(frame);
      auto traced = compiled->Match(frame, true);
      ASSERT_TRUE(plain.ok() && traced.ok());
      EXPECT_EQ(plain->matched, traced->matched) << n << " " << ready;
      EXPECT_EQ(plain->selected, traced->selected);
      EXPECT_TRUE(plain->trace.empty());
      ASSERT_EQ(traced->trace.size(), 3u);
      for (const RuleTrace& rule : traced->trace) {
        const bool listed =
            std::find(traced->matched.begin(), traced->matched.end(), rule.rule) != traced->matched.end();
        EXPECT_EQ(rule.matched, listed);
      }
    }
  }
}

// --- sharing between threads ---------------------------------------------

TEST(CompiledRuleSetTest, EvaluatesFromFourThreadsAtOnce) {
  RuleSetBuilder builder(HitPolicy::kCollect);
  builder.Fact("n").Fact("ready").Fact("role");
  builder.Rule("quorum-lost", {Cmp("n", CompareOp::kGt, "0"), Expr("ready", "2 * ready <= n")});
  builder.Rule("all-ready", {Cmp("ready", CompareOp::kEq, "n")});
  builder.Rule("leader", {In("role", R"(["Leader"])"), Range("ready", "1", "n", true, true)});
  builder.Rule("members", {Expr("role", R"(role.startsWith("M"))")},
               "[1, 2, 3].filter(i, i <= ready).size() >= 2");
  auto compiled = CompileOrFail(builder);
  ASSERT_NE(compiled, nullptr);
  const std::vector<std::string> roles = {"Leader", "Member", "Learner"};
  auto frame_for = [&](int i) {
    return FrameOf(*compiled,
                   {Value::Int(i % 6), Value::Int((i / 6) % 6), Value::String(roles[(i / 36) % 3])});
  };
  constexpr int kFrames = 108;
  std::vector<std::vector<int>> expected(kFrames);
  for (int i = 0; i < kFrames; ++i) {
    expr::Frame frame = frame_for(i);
    auto decision = compiled->Match(frame);
    ASSERT_TRUE(decision.ok());
    expected[i] = decision->selected;
  }
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 200; ++round) {
        for (int i = 0; i < kFrames; ++i) {
          expr::Frame frame = frame_for((i + t * 17) % kFrames);
          auto decision = compiled->Match(frame, round % 10 == 0);
          if (!decision.ok() || decision->selected != expected[(i + t * 17) % kFrames]) ++mismatches[t];
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

// --- a rule file through the loader --------------------------------------

constexpr const char* kRuleFile = R"yaml(apiVersion: ruleplane.dev/v1
kind: DecisionTable
metadata:
  name: matcher-test
  version: 1.0.0
spec:
  subject: EtcdCluster
  hitPolicy: FIRST
  params:
    - name: minReady
      type: int
      default: 1
  facts:
    - name: n
      expr: snapshot.etcd.spec.replicas
    - name: ready
      expr: snapshot.etcd.status.members.filter(m, m.status == "Ready").size()
  rules:
    - id: quorum-lost
      when:
        n: "> 0"
        ready: "[0..n)"
      condition: 2 * ready <= n
    - id: healthy
      when:
        ready: "== n"
)yaml";

TEST(CompiledRuleSetTest, RuleFileFromTheLoader) {
  auto loaded = LoadRuleFile(kRuleFile, "rules/x.yaml", nullptr);
  ASSERT_NE(loaded.rule_set, nullptr) << (loaded.diagnostics.empty() ? "" : loaded.diagnostics[0].message);
  auto compiled = CompiledRuleSet::Compile(loaded.rule_set);
  ASSERT_TRUE(compiled.ok()) << compiled.error().message;

  auto snapshot = ParseSnapshot(R"({"apiVersion": "ruleplane.dev/v1", "kind": "EtcdClusterSnapshot",
      "observedAt": "2024-05-01T10:00:00Z",
      "etcd": {"spec": {"replicas": 3}, "status": {"members": [
          {"name": "a", "status": "Ready"}, {"name": "b", "status": "NotReady"}, {"name": "c", "status": "NotReady"}]}}})");
  ASSERT_TRUE(snapshot.ok()) << snapshot.error().message;
  auto decision = (*compiled)->Evaluate(*snapshot, {});
  ASSERT_TRUE(decision.ok()) << decision.error().message;
  EXPECT_EQ(Ids(**compiled, decision->selected), IdList{"quorum-lost"});

  auto broken = ParseSnapshot(R"({"apiVersion": "ruleplane.dev/v1", "kind": "EtcdClusterSnapshot",
      "observedAt": "2024-05-01T10:00:00Z", "etcd": {"spec": {"replicas": 3}, "status": {}}})");
  ASSERT_TRUE(broken.ok()) << broken.error().message;
  auto failed = (*compiled)->Evaluate(*broken, {});
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, ErrorCode::kInvalidSnapshot);
  EXPECT_EQ(failed.error().message,
            "fact 'ready' (rules/x.yaml:17:13) cannot be derived: no such key: members");
}

}  // namespace
// spec.appliesWhen decides whether the rule set decides anything: when false,
// no fact is derived (one that would fail here is never evaluated); when it
// is not a bool, the error names it and its position.
TEST(CompiledRuleSetTest, AppliesWhenGuardsTheFactsAndMustBeABool) {
  auto compile = [](const std::string& applies_when) -> std::shared_ptr<const CompiledRuleSet> {
    const std::string text =
        "apiVersion: ruleplane.dev/v1\nkind: DecisionTable\nmetadata:\n  name: guarded\n  version: 1.0.0\n"
        "spec:\n  subject: EtcdCluster\n  hitPolicy: FIRST\n  appliesWhen: " +
        applies_when +
        "\n  facts:\n    - name: replicas\n      expr: snapshot.statefulSet.spec.replicas\n"
        "  rules:\n    - id: any\n      when: {replicas: '> 0'}\n";
    RuleLoadResult loaded = LoadRuleFile(text, "guarded.yaml", nullptr);
    EXPECT_TRUE(loaded.rule_set) << (loaded.diagnostics.empty() ? "" : loaded.diagnostics[0].message);
    if (!loaded.rule_set) return nullptr;
    auto compiled = CompiledRuleSet::Compile(loaded.rule_set);
    return compiled.ok() ? *compiled : nullptr;
  };
  auto without = ParseSnapshot(
      R"({"apiVersion": "ruleplane.dev/v1", "kind": "EtcdClusterSnapshot", "observedAt": "2024-05-01T10:00:00Z",
                                   "etcd": {"spec": {"replicas": 3}}})");
  auto with = ParseSnapshot(
      R"({"apiVersion": "ruleplane.dev/v1", "kind": "EtcdClusterSnapshot", "observedAt": "2024-05-01T10:00:00Z",
                                "etcd": {"spec": {"replicas": 3}}, "statefulSet": {"spec": {"replicas": 3}}})");
  ASSERT_TRUE(without.ok() && with.ok());

  auto guarded = compile("'\"statefulSet\" in snapshot'");
  ASSERT_TRUE(guarded);
  auto skipped = guarded->Evaluate(*without, {});
  ASSERT_TRUE(skipped.ok()) << skipped.error().message;
  EXPECT_FALSE(skipped->applies);
  EXPECT_TRUE(skipped->selected.empty());
  auto decided = guarded->Evaluate(*with, {});
  ASSERT_TRUE(decided.ok()) << decided.error().message;
  EXPECT_TRUE(decided->applies);
  EXPECT_EQ(Ids(*guarded, decided->selected), std::vector<std::string>{"any"});

  auto not_bool = compile("snapshot.etcd.spec.replicas");
  ASSERT_TRUE(not_bool);
  auto failed = not_bool->Evaluate(*with, {});
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, ErrorCode::kInvalidSnapshot);
  EXPECT_EQ(failed.error().message, "appliesWhen (guarded.yaml:9:16) cannot be decided: it is 3, not a bool");
}

}  // namespace ruleplane
