// ruleplane's side of the comparison with GoRules ZEN and json-rules-engine:
// times the comparison table on the comparison inputs, in process, and
// records every decision for the answer check.
//
//   ruleplane_compare --inputs INPUTS.jsonl --decisions DIR [--repetitions N]
//                     --table first=status-first.yaml --table collect=status-collect.yaml
//
// For each table: cold start (read, load and compile the rule file, then the
// first evaluation), a warm-up pass from JSON text that records the decisions
// (DIR/ruleplane-<policy>.txt, one line per input: the selected rule ids joined
// by ",", "-" for none), then N timed passes of
//   matcher     CompiledRuleSet::Match on fact vectors prepared once per input
//               by DeriveFacts (what a caller with facts in hand pays), and
//   end to end  JSON text -> ParseSnapshot -> CompiledRuleSet::Evaluate,
// each pass checked against the warm-up decisions. Prints the timings as JSON.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/common/snapshot.h"
#include "engine/match/compiled_rule_set.h"
#include "engine/rule_file/diagnostics.h"
#include "engine/rule_file/rule_loader.h"

namespace {

using ruleplane::CompiledRuleSet;
using Clock = std::chrono::steady_clock;
using Selected = std::vector<int>;

struct Options {
  std::string inputs;
  std::string decisions;
  int repetitions = 5;
  std::vector<std::pair<std::string, std::string>> tables;  // policy, rule file
};

bool ParseOptions(int argc, char** argv, Options& options) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string name = argv[i], value = argv[i + 1];
    if (name == "--inputs") {
      options.inputs = value;
    } else if (name == "--decisions") {
      options.decisions = value;
    } else if (name == "--repetitions") {
      options.repetitions = std::max(1, std::atoi(value.c_str()));
    } else if (name == "--table" && value.find('=') != std::string::npos) {
      options.tables.emplace_back(value.substr(0, value.find('=')), value.substr(value.find('=') + 1));
    } else {
      return false;
    }
  }
  return argc % 2 == 1 && !options.inputs.empty() && !options.decisions.empty() && !options.tables.empty();
}

bool ReadText(const std::string& path, std::string& text) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return false;
  std::ostringstream content;
  content << file.rdbuf();
  text = content.str();
  return true;
}

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream file(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(file, line);) {
    if (!line.empty()) lines.push_back(std::move(line));
  }
  return lines;
}

double NanosecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count();
}

// Processor time of the process, which a busy machine inflates less than
// elapsed time.
double CpuNanosecondsSince(std::clock_t start) {
  return static_cast<double>(std::clock() - start) * 1e9 / CLOCKS_PER_SEC;
}

struct Pass {
  double ns = 0;
  double cpu_ns = 0;
};

double MedianPerEval(std::vector<double> values, size_t count) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2] / static_cast<double>(count);
}

// A failure to evaluate is not a decision: it is marked so that it can never
// agree with a peer's answer.
Selected EndToEnd(const CompiledRuleSet& compiled, const std::string& line) {
  auto snapshot = ruleplane::ParseSnapshot(line);
  if (!snapshot.ok()) return {-1};
  auto decision = compiled.Evaluate(*snapshot, {});
  if (!decision.ok()) return {-1};
  return std::move(decision->selected);
}

// Matches into one Decision that every evaluation refills (the allocation-free
// form of Match), and records the selection into `out`'s storage.
void MatchFrame(const CompiledRuleSet& compiled, ruleplane::expr::Frame& frame, ruleplane::Decision& decision,
                Selected& out) {
  if (compiled.Match(frame, decision)) {
    out.assign(1, -1);
    return;
  }
  out.assign(decision.selected.begin(), decision.selected.end());
}

std::string DecisionText(const CompiledRuleSet& compiled, const Selected& selected) {
  if (selected.empty()) return "-";
  std::string text;
  for (const int rule : selected) {
    if (!text.empty()) text += ",";
    text += rule < 0 ? "error" : compiled.rule_set().rules[rule].id;
  }
  return text;
}

nlohmann::json Summary(const std::string& policy, const std::string& mode, size_t count, double cold_start_ns,
                       const std::vector<Pass>& passes) {
  std::vector<double> ns, cpu_ns;
  for (const Pass& pass : passes) {
    ns.push_back(pass.ns);
    cpu_ns.push_back(pass.cpu_ns);
  }
  const double median = MedianPerEval(ns, count);
  const auto [min, max] = std::minmax_element(ns.begin(), ns.end());
  return {{"engine", "ruleplane"},
          {"policy", policy},
          {"mode", mode},
          {"count", count},
          {"coldStartNs", cold_start_ns},
          {"repetitions", passes.size()},
          {"nsPerEval", {{"median", median}, {"min", *min / count}, {"max", *max / count}}},
          {"cpuNsPerEval", MedianPerEval(cpu_ns, count)},
          {"evalsPerSecond", 1e9 / median}};
}

// Runs one table and appends its timings to `results`; returns what went
// wrong, empty on success.
std::string MeasureTable(const Options& options, const std::string& policy, const std::string& rule_file,
                         const std::vector<std::string>& lines, nlohmann::json& results) {
  Clock::time_point start = Clock::now();
  std::string text;
  if (!ReadText(rule_file, text)) return "cannot read " + rule_file;
  auto loaded = ruleplane::LoadRuleFile(text, rule_file, nullptr);
  if (!loaded.rule_set) {
    std::string message;
    for (const auto& diagnostic : loaded.diagnostics)
      message += ruleplane::FormatDiagnostic(diagnostic, text);
    return message;
  }
  auto compiled_or = CompiledRuleSet::Compile(loaded.rule_set);
  if (!compiled_or.ok()) return rule_file + ": " + compiled_or.error().message;
  const CompiledRuleSet& compiled = **compiled_or;
  const Selected first = EndToEnd(compiled, lines.front());
  const double cold_start_ns = NanosecondsSince(start);
  if (!first.empty() && first.front() < 0) return "the first input cannot be evaluated";

  std::vector<Selected> decisions(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) decisions[i] = EndToEnd(compiled, lines[i]);
  {
    std::ofstream out(options.decisions + "/ruleplane-" + policy + ".txt");
    for (const Selected& selected : decisions) out << DecisionText(compiled, selected) << '\n';
    if (!out) return "cannot write the decisions to " + options.decisions;
  }

  // The fact vectors hold the facts (and params), as a caller with its facts
  // in hand would: the snapshot documents are released (no cell of the table
  // reads `snapshot`; one that did would fail, and the check below would
  // tell), and the vectors are copied once more so that they lie in memory in
  // the order they are matched, not scattered among the parsed documents.
  std::vector<ruleplane::expr::Frame> frames;
  frames.reserve(lines.size());
  for (const std::string& line : lines) {
    auto snapshot = ruleplane::ParseSnapshot(line);
    if (!snapshot.ok()) return snapshot.error().message;
    auto frame = compiled.DeriveFacts(*snapshot, {});
    if (!frame.ok()) return frame.error().message;
    (*frame)[compiled.layout().snapshot_slot()] = ruleplane::Value();
    frames.push_back(std::move(*frame));
  }
  frames = std::vector<ruleplane::expr::Frame>(frames.begin(), frames.end());

  std::vector<Selected> pass(lines.size());
  auto check = [&](const char* what) -> std::string {
    const auto differing = std::mismatch(pass.begin(), pass.end(), decisions.begin()).first;
    if (differing == pass.end()) return "";
    return policy + " " + what + ": input " + std::to_string(differing - pass.begin() + 1) +
           " decided differently";
  };
  std::vector<Pass> matcher, end_to_end;
  for (int r = 0; r < options.repetitions; ++r) {
    start = Clock::now();
    std::clock_t cpu_start = std::clock();
    ruleplane::Decision decision;
    for (size_t i = 0; i < frames.size(); ++i) MatchFrame(compiled, frames[i], decision, pass[i]);
    matcher.push_back({NanosecondsSince(start), CpuNanosecondsSince(cpu_start)});
    if (auto problem = check("matcher"); !problem.empty()) return problem;
    start = Clock::now();
    cpu_start = std::clock();
    for (size_t i = 0; i < lines.size(); ++i) pass[i] = EndToEnd(compiled, lines[i]);
    end_to_end.push_back({NanosecondsSince(start), CpuNanosecondsSince(cpu_start)});
    if (auto problem = check("end to end"); !problem.empty()) return problem;
  }
  results.push_back(Summary(policy, "in-process", frames.size(), cold_start_ns, matcher));
  results.push_back(Summary(policy, "end-to-end", lines.size(), cold_start_ns, end_to_end));
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ParseOptions(argc, argv, options)) {
    std::cerr << "usage: ruleplane_compare --inputs INPUTS.jsonl --decisions DIR [--repetitions N] "
                 "--table POLICY=RULES.yaml...\n";
    return 2;
  }
  const std::vector<std::string> lines = ReadLines(options.inputs);
  if (lines.empty()) {
    std::cerr << "ruleplane_compare: no inputs in " << options.inputs << "\n";
    return 2;
  }
  nlohmann::json results = nlohmann::json::array();
  for (const auto& [policy, rule_file] : options.tables) {
    if (std::string problem = MeasureTable(options, policy, rule_file, lines, results); !problem.empty()) {
      std::cerr << "ruleplane_compare: " << problem << "\n";
      return 1;
    }
  }
  std::cout << nlohmann::json{{"results", results}}.dump(2) << "\n";
  return 0;
}
