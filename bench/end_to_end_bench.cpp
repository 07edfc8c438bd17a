// End to end on the bundled etcd-druid status table (rules/etcd-druid/status.yaml)
// and the example snapshots (examples/snapshots/*.json), in rotation:
//
//   BM_MatchDerivedFrame   Match alone, on frames derived beforehand
//   BM_DeriveFacts         snapshot Value -> frame (params, facts)
//   BM_Evaluate            snapshot Value -> Decision (DeriveFacts + Match)
//   BM_ParseAndEvaluate    snapshot JSON text -> Decision
//   BM_Plan                snapshot Value -> Plan (with the action catalogue)
//
// And from JSON text to Plan, on one realistic 3-member snapshot
// (examples/snapshots/pink-of-health.json, compact, as the API server sends it)
// and on every snapshot in rotation, both ways side by side:
//
//   BM_TextToPlanWhole       ParseSnapshot (every Value built) + MakePlan
//   BM_TextToPlanProjected   PlanText: only what the rule set can read is built
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "engine/common/json_value.h"
#include "engine/common/snapshot.h"
#include "engine/match/compiled_rule_set.h"
#include "engine/plan/plan.h"
#include "engine/plan/snapshot_projection.h"
#include "engine/rule_file/action_catalogue.h"
#include "engine/rule_file/rule_loader.h"
#include "tests/support/source_paths.h"

namespace ruleplane {
namespace {

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

[[noreturn]] void Die(const std::string& message) {
  std::cerr << "end_to_end_bench: " << message << "\n";
  std::abort();
}

struct Fixture {
  std::shared_ptr<const CompiledRuleSet> compiled;
  std::shared_ptr<const ActionCatalogue> catalogue;
  std::vector<std::string> snapshot_texts;
  std::vector<Snapshot> snapshots;
  std::vector<expr::Frame> frames;
  std::vector<std::string> compact_texts;  // the same snapshots as compact JSON
  std::string three_members;               // pink-of-health, compact
};

const Fixture& GetFixture() {
  static const Fixture fixture = [] {
    Fixture f;
    const std::filesystem::path root = testing::SourceDir();
    const std::string rules_path = "rules/etcd-druid/status.yaml";
    auto catalogue = LoadActionCatalogue(ReadFile(root / "actions/catalogue.yaml"), "actions/catalogue.yaml");
    if (!catalogue.catalogue) Die("cannot load actions/catalogue.yaml");
    f.catalogue = catalogue.catalogue;
    auto loaded = LoadRuleFile(ReadFile(root / rules_path), rules_path, f.catalogue.get());
    if (!loaded.rule_set) Die("cannot load " + rules_path);
    auto compiled = CompiledRuleSet::Compile(loaded.rule_set);
    if (!compiled.ok()) Die(compiled.error().message);
    f.compiled = *compiled;

    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(root / "examples/snapshots")) {
      if (entry.path().extension() == ".json") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      std::string text = ReadFile(file);
      auto snapshot = ParseSnapshot(text);
      if (!snapshot.ok()) Die(file.string() + ": " + snapshot.error().message);
      if (snapshot->subject() != loaded.rule_set->subject) continue;
      auto frame = f.compiled->DeriveFacts(*snapshot, {});
      if (!frame.ok()) Die(file.string() + ": " + frame.error().message);
      f.snapshot_texts.push_back(std::move(text));
      f.snapshots.push_back(*std::move(snapshot));
      f.compact_texts.push_back(FormatJson(snapshot->document));
      if (file.filename() == "pink-of-health.json") f.three_members = f.compact_texts.back();
      f.frames.push_back(*std::move(frame));
    }
    if (f.snapshots.empty()) Die("no EtcdCluster snapshots in examples/snapshots");
    return f;
  }();
  return fixture;
}

void ReportPerEval(benchmark::State& state) {
  state.counters["seconds_per_eval"] = benchmark::Counter(
      static_cast<double>(state.iterations()), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_MatchDerivedFrame(benchmark::State& state) {
  const Fixture& f = GetFixture();
  std::vector<expr::Frame> frames = f.frames;
  size_t i = 0;
  for (auto _ : state) {
    auto decision = f.compiled->Match(frames[i++ % frames.size()]);
    benchmark::DoNotOptimize(decision);
  }
  ReportPerEval(state);
}

void BM_DeriveFacts(benchmark::State& state) {
  const Fixture& f = GetFixture();
  size_t i = 0;
  for (auto _ : state) {
    auto frame = f.compiled->DeriveFacts(f.snapshots[i++ % f.snapshots.size()], {});
    benchmark::DoNotOptimize(frame);
  }
  ReportPerEval(state);
}

void BM_Evaluate(benchmark::State& state) {
  const Fixture& f = GetFixture();
  size_t i = 0;
  for (auto _ : state) {
    auto decision = f.compiled->Evaluate(f.snapshots[i++ % f.snapshots.size()], {});
    if (!decision.ok()) {
      state.SkipWithError(decision.error().message.c_str());
      break;
    }
    benchmark::DoNotOptimize(decision);
  }
  ReportPerEval(state);
}

void BM_ParseAndEvaluate(benchmark::State& state) {
  const Fixture& f = GetFixture();
  size_t i = 0;
  for (auto _ : state) {
    auto snapshot = ParseSnapshot(f.snapshot_texts[i++ % f.snapshot_texts.size()]);
    auto decision = f.compiled->Evaluate(*snapshot, {});
    benchmark::DoNotOptimize(decision);
  }
  ReportPerEval(state);
}

void BM_Plan(benchmark::State& state) {
  const Fixture& f = GetFixture();
  const std::vector<std::shared_ptr<const CompiledRuleSet>> rule_sets = {f.compiled};
  size_t i = 0;
  for (auto _ : state) {
    auto plan = MakePlan(rule_sets, f.snapshots[i++ % f.snapshots.size()], {}, f.catalogue.get());
    if (!plan.ok()) {
      state.SkipWithError(plan.error().message.c_str());
      break;
    }
    benchmark::DoNotOptimize(plan);
  }
  ReportPerEval(state);
}

// arg 0: the 3-member snapshot alone; 1: every snapshot in rotation.
const std::string& TextFor(const Fixture& f, const benchmark::State& state, size_t i) {
  return state.range(0) == 0 ? f.three_members : f.compact_texts[i % f.compact_texts.size()];
}

void BM_TextToPlanWhole(benchmark::State& state) {
  const Fixture& f = GetFixture();
  const std::vector<std::shared_ptr<const CompiledRuleSet>> rule_sets = {f.compiled};
  size_t i = 0;
  for (auto _ : state) {
    auto snapshot = ParseSnapshot(TextFor(f, state, i++));
    auto plan = MakePlan(rule_sets, *snapshot, {}, f.catalogue.get());
    benchmark::DoNotOptimize(plan);
  }
  ReportPerEval(state);
}

void BM_TextToPlanProjected(benchmark::State& state) {
  const Fixture& f = GetFixture();
  const std::vector<std::shared_ptr<const CompiledRuleSet>> rule_sets = {f.compiled};
  const SnapshotProjection projection = SnapshotProjection::For(rule_sets);
  size_t i = 0;
  for (auto _ : state) {
    auto plan = PlanText(projection, rule_sets, TextFor(f, state, i++), {}, f.catalogue.get());
    if (!plan.ok()) {
      state.SkipWithError(plan.error().message.c_str());
      break;
    }
    benchmark::DoNotOptimize(plan);
  }
  ReportPerEval(state);
}

BENCHMARK(BM_MatchDerivedFrame);
BENCHMARK(BM_DeriveFacts);
BENCHMARK(BM_Evaluate);
BENCHMARK(BM_ParseAndEvaluate);
BENCHMARK(BM_Plan);
BENCHMARK(BM_TextToPlanWhole)->ArgName("rotation")->Arg(0)->Arg(1);
BENCHMARK(BM_TextToPlanProjected)->ArgName("rotation")->Arg(0)->Arg(1);

}  // namespace
}  // namespace ruleplane

BENCHMARK_MAIN();
