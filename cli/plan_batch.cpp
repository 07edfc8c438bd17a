#include "cli/plan_batch.h"

#include <ext/stdio_filebuf.h>

#include <algorithm>
#include <cstring>
#include <istream>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/line_reader.h"
#include "cli/read_file.h"
#include "cli/rule_library.h"
#include "cli/snapshot_input.h"
#include "engine/common/json_value.h"
#include "engine/plan/plan.h"
#include "engine/plan/snapshot_projection.h"
#include "platform/file_input.h"

namespace ruleplane::cli {

const char* const kPlanBatchUsage =
    R"(usage: ruleplane plan [--rules PATH|NAME@VERSION]... [--param NAME=VALUE]... --batch SNAPSHOTS.jsonl

Plans many snapshots in one run: one JSON snapshot per input line ("-" reads
standard input), one compact JSON line per snapshot on standard output, in
input order. Each snapshot is evaluated against the rule files for its kind,
as `plan` does; the rule files are loaded and compiled once. Blank lines are
skipped. A line that fails does not stop the batch:
  {"line":1,"ruleSets":[{"name":"etcd-druid-status","version":"1.0.0","matchedRules":["quorum-lost"]}],
   "steps":[{"id":"etcd-druid-status/quorum-lost/1","ruleSet":"etcd-druid-status@1.0.0","rule":"quorum-lost",
             "action":"ScaleStatefulSet","target":"etcd-main","params":{"replicas":0},"disruptive":true,
             "adapter":"kubernetes","dependsOn":[],"idempotencyKey":"sha256:..."}]}
  {"line":2,"error":"invalid JSON at line 1, column 13 (byte 13): ..."}
A rule set whose hit policy is violated has "violation" instead of its
matched rules, one that could not be evaluated "error", and neither
contributes steps; the other rule sets of the line are planned. A line
longer than 256 MiB (the bound of one snapshot file) is reported on its line
and skipped.

Exit codes: 0 every line planned, 1 a line failed (bad or malformed JSON, an
evaluation error, a hit-policy violation), 2 bad usage or an unreadable input
or rule file.
)";

namespace {

using RuleSets = std::vector<std::shared_ptr<const CompiledRuleSet>>;

// Builds the output in a buffer written out in large pieces.
class JsonLineWriter {
 public:
  explicit JsonLineWriter(std::ostream& out) : out_(out) { buffer_.reserve(kFlushSize * 2); }
  ~JsonLineWriter() { Flush(); }

  // A string known to need no escaping beyond quotes and backslashes (names,
  // ids, versions, digests: validated by the loader or produced by ruleplane).
  JsonLineWriter& Name(std::string_view text) {
    buffer_ += '"';
    for (const char c : text) {
      if (c == '"' || c == '\\') buffer_ += '\\';
      buffer_ += c;
    }
    buffer_ += '"';
    return *this;
  }
  // Any string from the input or an error message: escaped, invalid UTF-8 replaced.
  JsonLineWriter& Text(const std::string& text) { return Raw(FormatJson(Value::String(text))); }
  JsonLineWriter& Json(const Value& value) { return Raw(FormatJson(value)); }
  JsonLineWriter& Raw(std::string_view text) {
    buffer_ += text;
    return *this;
  }
  JsonLineWriter& Number(long long number) { return Raw(std::to_string(number)); }

  void EndLine() {
    buffer_ += '\n';
    if (buffer_.size() >= kFlushSize) Flush();
  }
  void Flush() {
    out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    buffer_.clear();
  }

 private:
  static constexpr size_t kFlushSize = 1 << 16;
  std::ostream& out_;
  std::string buffer_;
};

void WritePlan(const Plan& plan, JsonLineWriter& writer) {
  writer.Raw(",\"ruleSets\":[");
  for (size_t i = 0; i < plan.rule_sets.size(); ++i) {
    const PlannedRuleSet& rule_set = plan.rule_sets[i];
    writer.Raw(i == 0 ? "{\"name\":" : ",{\"name\":")
        .Name(rule_set.name)
        .Raw(",\"version\":")
        .Name(rule_set.version);
    if (rule_set.error) {
      writer.Raw(",\"error\":").Text(rule_set.error->message).Raw("}");
      continue;
    }
    if (rule_set.violation) {
      writer.Raw(",\"violation\":").Text(rule_set.violation->message).Raw("}");
      continue;
    }
    writer.Raw(",\"matchedRules\":[");
    for (size_t r = 0; r < rule_set.matched_rules.size(); ++r) {
      if (r > 0) writer.Raw(",");
      writer.Name(rule_set.matched_rules[r]);
    }
    writer.Raw("]}");
  }
  writer.Raw("],\"steps\":[");
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& step = plan.steps[i];
    writer.Raw(i == 0 ? "{\"id\":" : ",{\"id\":").Name(step.id);
    writer.Raw(",\"ruleSet\":").Name(step.rule_set).Raw(",\"rule\":").Name(step.rule);
    writer.Raw(",\"action\":").Name(step.action).Raw(",\"target\":").Text(step.target);
    writer.Raw(",\"params\":").Json(step.params);
    writer.Raw(",\"disruptive\":").Raw(step.disruptive ? "true" : "false");
    writer.Raw(",\"adapter\":").Name(step.adapter).Raw(",\"dependsOn\":[");
    for (size_t d = 0; d < step.depends_on.size(); ++d) {
      if (d > 0) writer.Raw(",");
      writer.Name(step.depends_on[d]);
    }
    writer.Raw("],\"idempotencyKey\":").Name(step.idempotency_key).Raw("}");
  }
  writer.Raw("]");
}

// plan's flags and `--batch FILE`; the snapshots come from FILE only.
std::optional<EvaluationArgs> ParseBatchArgs(const Args& args, std::ostream& err) {
  Flags flags(EvaluationFlags({"-o", "--batch"}));
  EvaluationArgs parsed;
  parsed.output = "json";
  if (!flags.Parse(args, err, kPlanBatchUsage) || !ReadEvaluationFlags(flags, parsed, err))
    return std::nullopt;
  if (!flags.positional().empty()) {
    err << "ruleplane: --batch reads the snapshots from its file; unexpected '" << flags.positional()[0]
        << "'\n"
        << kPlanBatchUsage;
    return std::nullopt;
  }
  if (flags.GetAll("--batch").size() != 1) {
    err << "ruleplane: --batch needs one file (\"-\" for standard input)\n" << kPlanBatchUsage;
    return std::nullopt;
  }
  if (parsed.output != "json") {
    err << "ruleplane: --batch writes JSON lines; -o must be json\n";
    return std::nullopt;
  }
  parsed.snapshot_path = flags.Get("--batch");
  return parsed;
}

// The compiled rule sets by subject, and the param overrides, checked once.
struct BatchRules {
  std::unique_ptr<RuleLibrary> library;
  std::map<std::string, RuleSets, std::less<>> by_subject;
  SnapshotProjection projection;  // what any of them reads
  EvaluationOptions options;
};

std::optional<BatchRules> LoadBatchRules(const EvaluationArgs& args, std::ostream& err, int& exit_code) {
  exit_code = kExitUsage;
  BatchRules rules;
  // The same rule files as `plan` of one snapshot.
  rules.library = LoadRuleLibrary(args.rules.empty() ? DefaultRuleReferences() : args.rules, err);
  if (!rules.library) return std::nullopt;
  if (PrintDiagnostics(*rules.library, err) > 0) {
    exit_code = kExitFinding;
    return std::nullopt;
  }
  RuleSets all;
  for (auto& compiled : SelectForSubject(*rules.library, "", err)) {
    all.push_back(compiled);
    rules.by_subject[compiled->rule_set().subject].push_back(std::move(compiled));
  }
  rules.projection = SnapshotProjection::For(all);
  // Checked once here rather than failing every line.
  for (const auto& [name, text] : args.params) {
    const Value value = Value::String(text);
    bool declared = false;
    for (const auto& [subject, rule_sets] : rules.by_subject) {
      for (const auto& compiled : rule_sets) {
        const int param = compiled->rule_set().FindParam(name);
        if (param < 0) continue;
        declared = true;
        auto converted = ConvertParam(compiled->rule_set().params[param], value);
        if (!converted.ok()) {
          err << "ruleplane: --param " << name << ": " << converted.error().message << "\n";
          return std::nullopt;
        }
      }
    }
    if (!declared) {
      err << "ruleplane: --param " << name << ": no rule file declares a param '" << name << "'\n";
      return std::nullopt;
    }
    rules.options.param_overrides.emplace_back(name, value);
  }
  rules.options.budget = args.budget;
  exit_code = kExitOk;
  return rules;
}

// Plans one line into `writer`; returns whether it succeeded.
bool PlanLine(const BatchRules& rules, std::string_view line, JsonLineWriter& writer) {
  auto snapshot = rules.projection.Parse(line);
  if (!snapshot.ok()) {
    writer.Raw(",\"error\":").Text(snapshot.error().message);
    return false;
  }
  const std::string subject = snapshot->subject();
  const auto rule_sets = rules.by_subject.find(subject);
  if (rule_sets == rules.by_subject.end()) {
    writer.Raw(",\"error\":")
        .Text("no rule file has subject '" + subject + "' (the snapshot's kind is " + snapshot->kind + ")");
    return false;
  }
  auto plan =
      PlanProjected(rule_sets->second, *snapshot, line, rules.options, rules.library->catalogue.get());
  if (!plan.ok()) {
    writer.Raw(",\"error\":").Text(plan.error().message);
    return false;
  }
  WritePlan(*plan, writer);
  return !plan->has_violation() && !plan->has_error();
}

}  // namespace

int RunPlanBatch(const Args& args, std::istream& in, std::ostream& out, std::ostream& err) {
  if (HelpRequested(args)) return PrintUsage(kPlanBatchUsage, out);
  auto parsed = ParseBatchArgs(args, err);
  if (!parsed) return kExitUsage;
  int exit_code = kExitOk;
  auto rules = LoadBatchRules(*parsed, err, exit_code);
  if (!rules) return exit_code;

  // A named file is read from the descriptor that was checked to be a
  // regular file (a device such as /dev/zero never ends); a stream comes on
  // standard input.
  std::optional<__gnu_cxx::stdio_filebuf<char>> named;  // closes the descriptor
  std::istream file(nullptr);
  if (parsed->snapshot_path != "-") {
    if (std::optional<Error> error = CheckFile(parsed->snapshot_path)) {
      err << "ruleplane: " << error->message << "\n";
      return kExitUsage;
    }
    auto regular = OpenRegularFile(parsed->snapshot_path);
    if (!regular.ok()) {
      err << "ruleplane: " << regular.error().message
          << " (a stream can be given on standard input: --batch -)\n";
      return kExitUsage;
    }
    named.emplace(*regular, std::ios::in | std::ios::binary);
    file.rdbuf(&*named);
  }
  LineReader reader(parsed->snapshot_path == "-" ? in : file, kMaxCliInputBytes);
  JsonLineWriter writer(out);
  long long number = 0, planned = 0, failed = 0;
  std::string line;
  for (LineReader::Read read; (read = reader.Next(line)) != LineReader::Read::kEnd;) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (read == LineReader::Read::kLine && line.find_first_not_of(" \t") == std::string::npos) continue;
    ++planned;
    writer.Raw("{\"line\":").Number(number);
    if (read == LineReader::Read::kTooLong) {
      writer.Raw(",\"error\":")
          .Text("the line is longer than " + FormatBytes(kMaxCliInputBytes) +
                ", the bound of one snapshot; skipped");
      ++failed;
    } else if (!PlanLine(*rules, line, writer)) {
      ++failed;
    }
    writer.Raw("}").EndLine();
  }
  writer.Flush();
  if (failed > 0) {
    err << "ruleplane: " << failed << " of " << planned << " snapshots failed\n";
    return kExitFinding;
  }
  return kExitOk;
}

}  // namespace ruleplane::cli
