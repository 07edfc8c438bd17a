// The matcher alone: CompiledRuleSet::Match on prepared fact vectors.
//
// The table has 15 rules over 15 columns, modelled on etcd-druid's status
// decision table (counts, conditions, booleans, `== n`-style relational cells,
// ranges, and a few full boolean cells and conditions). 64 fact vectors,
// plausible cluster states drawn with a fixed seed, are matched in rotation so
// that branch predictors and caches do not see one input only.
//
//   BM_Match              the index + the residual cells, into a reused Decision
//   BM_MatchNewDecision   the same, returning a new Decision (what `plan` does)
//   BM_MatchWithTrace     every cell of every rule, no index (what `explain` does)
//   BM_MatchSameVector    BM_Match on one fact vector only
//   BM_BaselineIndexOnly  the bare arithmetic of 15 index lookups, for scale
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "engine/match/compiled_rule_set.h"
#include "engine/rule_file/rule_loader.h"

namespace ruleplane {
namespace {

constexpr const char* kTable = R"yaml(apiVersion: ruleplane.dev/v1
kind: DecisionTable
metadata:
  name: matcher-bench
  version: 1.0.0
spec:
  subject: EtcdCluster
  hitPolicy: COLLECT
  facts:
    - {name: n, expr: snapshot.f.n}
    - {name: clusterSize, expr: snapshot.f.clusterSize}
    - {name: stsReplicas, expr: snapshot.f.stsReplicas}
    - {name: stsReady, expr: snapshot.f.stsReady}
    - {name: total, expr: snapshot.f.total}
    - {name: ready, expr: snapshot.f.ready}
    - {name: notReady, expr: snapshot.f.notReady}
    - {name: unknown, expr: snapshot.f.unknown}
    - {name: expiredLeases, expr: snapshot.f.expiredLeases}
    - {name: readyCondition, expr: snapshot.f.readyCondition}
    - {name: allReadyCondition, expr: snapshot.f.allReadyCondition}
    - {name: backupReady, expr: snapshot.f.backupReady}
    - {name: pdbMinAvailable, expr: snapshot.f.pdbMinAvailable}
    - {name: scaling, expr: snapshot.f.scaling}
    - {name: learners, expr: snapshot.f.learners}
  rules:
    - id: pink-of-health
      when: {n: "> 0", clusterSize: "== n", stsReplicas: "== n", stsReady: "== n", total: "== n", ready: "== n",
             notReady: 0, unknown: 0, expiredLeases: 0, readyCondition: '"True"', allReadyCondition: '"True"',
             backupReady: true, scaling: false, learners: 0}
    - id: leases-out-of-sync
      when: {expiredLeases: "> 0", unknown: 0, readyCondition: '"True"'}
    - id: all-members-ready-condition-stale
      when: {ready: "== n", allReadyCondition: '!= "True"'}
    - id: not-all-members-ready-condition-stale
      when: {ready: "[0..n)", allReadyCondition: '"True"'}
    - id: quorum-lost
      when: {clusterSize: "> 0", notReady: "2 * notReady >= clusterSize", readyCondition: '"False"',
             backupReady: true}
    - id: minority-not-ready
      when: {notReady: "> 0", unknown: 0, readyCondition: '"True"', backupReady: true}
      condition: 2 * notReady < clusterSize
    - id: unknown-too-long
      when: {unknown: "> 0", expiredLeases: "[1..7]"}
    - id: scale-up
      when: {n: "> clusterSize", clusterSize: "[1..5]", stsReplicas: "== clusterSize", scaling: false,
             backupReady: true}
    - id: scale-up-in-progress
      when: {scaling: true, learners: "> 0", stsReplicas: "== n"}
    - id: scale-down
      when: {n: "[1..clusterSize)", backupReady: true, learners: 0}
    - id: superfluous-member-entries
      when: {total: "> clusterSize", stsReplicas: "== clusterSize", stsReady: "== clusterSize"}
    - id: pdb-min-available-stale
      when: {n: "> 1", pdbMinAvailable: "pdbMinAvailable != clusterSize / 2 + 1"}
    - id: statefulset-not-ready
      when: {stsReady: "< stsReplicas", readyCondition: 'in ["True", "Unknown"]'}
    - id: backup-not-ready
      when: {backupReady: false, readyCondition: '"True"', n: "[1..7]"}
    - id: hibernated
      when: {n: 0, stsReplicas: "> 0"}
)yaml";

// splitmix64, for a fixed and portable set of fact vectors.
uint64_t Next(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

struct Fixture {
  std::shared_ptr<const CompiledRuleSet> compiled;
  std::vector<expr::Frame> frames;
};

const Fixture& GetFixture() {
  static const Fixture fixture = [] {
    Fixture f;
    auto loaded = LoadRuleFile(kTable, "bench/matcher_bench.yaml", nullptr);
    if (!loaded.rule_set) {
      for (const auto& d : loaded.diagnostics) std::cerr << d.position.line << ": " << d.message << "\n";
      std::abort();
    }
    auto compiled = CompiledRuleSet::Compile(loaded.rule_set);
    if (!compiled.ok()) {
      std::cerr << compiled.error().message << "\n";
      std::abort();
    }
    f.compiled = *compiled;
    const std::vector<std::string> conditions = {"True", "True", "True", "False", "Unknown"};
    uint64_t seed = 42;
    for (int i = 0; i < 64; ++i) {
      auto pick = [&](int low, int high) { return low + static_cast<int>(Next(seed) % (high - low + 1)); };
      const int n = pick(0, 2) == 0 ? pick(0, 5) : 3;
      const int size = pick(0, 3) == 0 ? pick(0, 5) : n;
      const int not_ready = pick(0, 2) == 0 ? pick(0, size) : 0;
      const int unknown = pick(0, 3) == 0 ? pick(0, size - not_ready) : 0;
      expr::Frame frame(f.compiled->frame_size());
      const std::vector<Value> facts = {
          Value::Int(n),
          Value::Int(size),
          Value::Int(pick(0, 3) == 0 ? pick(0, 5) : size),
          Value::Int(size - not_ready),
          Value::Int(pick(0, 4) == 0 ? size + 1 : size),
          Value::Int(size - not_ready - unknown),
          Value::Int(not_ready),
          Value::Int(unknown),
          Value::Int(pick(0, 3) == 0 ? pick(0, 2) : 0),
          Value::String(conditions[pick(0, 4)]),
          Value::String(conditions[pick(0, 4)]),
          Value::Bool(pick(0, 5) != 0),
          Value::Int(pick(0, 4) == 0 ? pick(0, 3) : size / 2 + 1),
          Value::Bool(pick(0, 5) == 0),
          Value::Int(pick(0, 5) == 0 ? 1 : 0),
      };
      for (size_t slot = 0; slot < facts.size(); ++slot) frame[slot] = facts[slot];
      f.frames.push_back(std::move(frame));
    }
    return f;
  }();
  return fixture;
}

void Report(benchmark::State& state, size_t matched) {
  state.counters["seconds_per_eval"] = benchmark::Counter(
      static_cast<double>(state.iterations()), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["matches_per_eval"] = static_cast<double>(matched) / static_cast<double>(state.iterations());
}

// Match into one Decision that every evaluation refills.
void RunReusingDecision(benchmark::State& state, size_t rotation) {
  const Fixture& fixture = GetFixture();
  std::vector<expr::Frame> frames = fixture.frames;
  Decision decision;
  size_t matched = 0, i = 0;
  for (auto _ : state) {
    if (auto error = fixture.compiled->Match(frames[i++ % rotation], decision)) {
      state.SkipWithError(error->message.c_str());
      break;
    }
    matched += decision.matched.size();
    benchmark::DoNotOptimize(decision);
  }
  Report(state, matched);
}

// Match returning a new Decision every time.
void RunReturningDecision(benchmark::State& state, bool trace) {
  const Fixture& fixture = GetFixture();
  std::vector<expr::Frame> frames = fixture.frames;
  size_t matched = 0, i = 0;
  for (auto _ : state) {
    auto decision = fixture.compiled->Match(frames[i++ % frames.size()], trace);
    if (!decision.ok()) {
      state.SkipWithError(decision.error().message.c_str());
      break;
    }
    matched += decision->matched.size();
    benchmark::DoNotOptimize(decision);
  }
  Report(state, matched);
}

void BM_Match(benchmark::State& state) { RunReusingDecision(state, 64); }
void BM_MatchNewDecision(benchmark::State& state) { RunReturningDecision(state, false); }
void BM_MatchWithTrace(benchmark::State& state) { RunReturningDecision(state, true); }
// One fact vector over and over (a controller re-evaluating a steady cluster).
void BM_MatchSameVector(benchmark::State& state) { RunReusingDecision(state, 1); }

// A floor for any indexed matcher on this machine: 15 binary searches among 4
// int breakpoints and 15 bitset intersections, on the same rotating values,
// with no Values, no residual cells and no Decision.
void BM_BaselineIndexOnly(benchmark::State& state) {
  const std::vector<int64_t> breakpoints = {0, 1, 3, 5};
  const std::vector<uint64_t> bitsets(9 * 15, 0x5555);
  int64_t values[64 * 15];
  uint64_t seed = 7;
  for (int64_t& value : values) value = static_cast<int64_t>(Next(seed) % 7);
  size_t i = 0;
  for (auto _ : state) {
    uint64_t candidates = ~uint64_t{0};
    const int64_t* row = &values[(i++ & 63) * 15];
    for (int column = 0; column < 15; ++column) {
      const auto it = std::lower_bound(breakpoints.begin(), breakpoints.end(), row[column]);
      const int region =
          2 * static_cast<int>(it - breakpoints.begin()) + (it != breakpoints.end() && *it == row[column]);
      candidates &= bitsets[column * 9 + region];
    }
    benchmark::DoNotOptimize(candidates);
  }
  state.counters["seconds_per_eval"] = benchmark::Counter(
      static_cast<double>(state.iterations()), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

BENCHMARK(BM_Match);
BENCHMARK(BM_MatchNewDecision);
BENCHMARK(BM_MatchWithTrace);
BENCHMARK(BM_MatchSameVector);
BENCHMARK(BM_BaselineIndexOnly);

}  // namespace
}  // namespace ruleplane

BENCHMARK_MAIN();
