// Expression evaluation speed: `2 * ready > n` should take tens of nanoseconds.
//   cmake --build build --target expression_bench && build/expression_bench
#include <benchmark/benchmark.h>

#include <string>

#include "engine/common/json_value.h"
#include "engine/expr/expression.h"

namespace ruleplane::expr {
namespace {

constexpr const char* kSnapshot = R"({"etcd": {"spec": {"replicas": 3}, "status": {"members": [
  {"name": "etcd-main-0", "status": "Ready"}, {"name": "etcd-main-1", "status": "NotReady"},
  {"name": "etcd-main-2", "status": "Ready"}]}}})";

void Run(benchmark::State& state, const std::string& text) {
  Environment env;
  env.Declare("ready", 0);
  env.Declare("n", 1);
  env.Declare("snapshot", 2);
  env.Declare("name", 3);
  auto program = Compile(text, env);
  if (!program.ok()) {
    state.SkipWithError(program.error().message.c_str());
    return;
  }
  Frame frame((*program)->frame_size());
  frame[0] = Value::Int(2);
  frame[1] = Value::Int(3);
  frame[2] = *ParseJson(kSnapshot);
  frame[3] = Value::String("etcd-main-0");
  for (auto _ : state) benchmark::DoNotOptimize((*program)->Evaluate(frame));
}

void BM_CompareInts(benchmark::State& state) { Run(state, "2 * ready > n"); }
void BM_FieldPath(benchmark::State& state) { Run(state, "snapshot.etcd.spec.replicas"); }
void BM_CountReady(benchmark::State& state) {
  Run(state, "snapshot.etcd.status.members.filter(m, m.status == 'Ready').size()");
}
void BM_ConstantRegex(benchmark::State& state) { Run(state, "name.matches('^etcd-[a-z]+-[0-9]+$')"); }
void BM_Compile(benchmark::State& state) {
  Environment env;
  env.Declare("ready", 0);
  env.Declare("n", 1);
  for (auto _ : state) benchmark::DoNotOptimize(Compile("2 * ready > n && ready <= n", env));
}

BENCHMARK(BM_CompareInts);
BENCHMARK(BM_FieldPath);
BENCHMARK(BM_CountReady);
BENCHMARK(BM_ConstantRegex);
BENCHMARK(BM_Compile);

}  // namespace
}  // namespace ruleplane::expr

BENCHMARK_MAIN();
