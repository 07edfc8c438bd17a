// ruleplane history: what the journal recorded, plan by plan, step by step.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <ostream>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/output_format.h"
#include "engine/common/json_value.h"
#include "execution/executor.h"
#include "execution/journal.h"

namespace ruleplane::cli {
namespace {

constexpr const char* kHistoryUsage =
    R"(usage: ruleplane history [--journal FILE] [--limit N] [--plan ID] [-o table|json]

Lists what the journal recorded, the latest plan first: each plan's command,
subject, state and matched rules, and each of its steps with its state,
attempts, timing and message. --plan ID shows one plan with every request its
steps sent. --journal defaults to $RULEPLANE_JOURNAL.

Exit codes: 0 listed, 2 bad usage or no such journal.
)";

Value PlanToHistoryValue(const PlanRecord& plan) {
  Value::List steps;
  for (const StepRecord& step : plan.steps) {
    const StepReport report{step.step_id,  step.action,  step.target,  step.state,
                            step.attempts, step.message, step.requests};
    steps.push_back(
        StepReportToValue(report, {{Value::String("startedAt"), Value::String(step.started_at)},
                                   {Value::String("finishedAt"), Value::String(step.finished_at)}}));
  }
  Value::List rules;
  for (const std::string& rule : plan.matched_rules) rules.push_back(Value::String(rule));
  return Value::MakeMap({{Value::String("id"), Value::Int(plan.id)},
                         {Value::String("evaluation"), Value::Int(plan.evaluation_id)},
                         {Value::String("command"), Value::String(plan.command)},
                         {Value::String("subject"), Value::String(plan.subject)},
                         {Value::String("dryRun"), Value::Bool(plan.dry_run)},
                         {Value::String("state"), Value::String(plan.state)},
                         {Value::String("error"), Value::String(plan.error)},
                         {Value::String("startedAt"), Value::String(plan.started_at)},
                         {Value::String("finishedAt"), Value::String(plan.finished_at)},
                         {Value::String("rules"), Value::MakeList(std::move(rules))},
                         {Value::String("steps"), Value::MakeList(std::move(steps))}});
}

// Every text as Printable: journal text comes from names, messages and answers of the world.
void PrintPlan(const PlanRecord& plan, bool requests, std::ostream& out) {
  out << "plan " << plan.id << "  " << Printable(plan.command) << "  " << Printable(plan.subject) << "  "
      << Printable(plan.dry_run ? "dry-run" : plan.state) << "  " << Printable(plan.started_at);
  for (const std::string& rule : plan.matched_rules) out << "  " << Printable(rule);
  out << "\n";
  if (!plan.error.empty()) out << "  error: " << Printable(plan.error) << "\n";
  for (const StepRecord& step : plan.steps) {
    out << "  " << Printable(step.action) << " " << Printable(step.target) << "  "
        << StepStateName(step.state);
    if (step.attempts > 1) out << " (" << step.attempts << " attempts)";
    if (!step.started_at.empty())
      out << "  " << Printable(step.started_at) << " .. " << Printable(step.finished_at);
    if (!step.message.empty()) out << "  " << Printable(step.message);
    out << "\n";
    if (!requests) continue;
    for (const Request& request : step.requests)
      out << "      " << Printable(DescribeRequest(request)) << "\n";
  }
}

}  // namespace

int RunHistory(const Args& args, std::ostream& out, std::ostream& err) {
  if (HelpRequested(args)) return PrintUsage(kHistoryUsage, out);
  Flags flags({{"--journal"}, {"--limit"}, {"--plan"}, {"-o"}});
  if (!flags.Parse(args, err, kHistoryUsage)) return kExitUsage;
  const char* from_environment = std::getenv("RULEPLANE_JOURNAL");
  const std::string path = flags.Get("--journal", from_environment != nullptr ? from_environment : "");
  const std::string format = flags.Get("-o", "table");
  if (path.empty() || (format != "table" && format != "json")) {
    err << kHistoryUsage;
    return kExitUsage;
  }
  int64_t limit = 0, plan_id = 0;
  if (!flags.GetCount("--limit", limit, err) || !flags.GetCount("--plan", plan_id, err)) return kExitUsage;
  std::error_code missing;
  if (!std::filesystem::is_regular_file(path, missing)) {
    err << "ruleplane: no journal at " << path << "\n";
    return kExitUsage;
  }
  auto journal = Journal::OpenForReading(path);
  if (!journal.ok()) {
    err << "ruleplane: " << journal.error().message << "\n";
    return kExitUsage;
  }
  auto plans = (*journal)->Plans(plan_id != 0 ? 0 : static_cast<int>(std::min<int64_t>(limit, INT32_MAX)));
  if (!plans.ok()) {
    err << "ruleplane: " << plans.error().message << "\n";
    return kExitUsage;
  }
  std::erase_if(*plans, [&](const PlanRecord& plan) { return plan_id != 0 && plan.id != plan_id; });
  if (format == "json") {
    Value::List list;
    for (const PlanRecord& plan : *plans) list.push_back(PlanToHistoryValue(plan));
    out << FormatJson(Value::MakeList(std::move(list)), 2) << "\n";
  } else {
    for (const PlanRecord& plan : *plans) PrintPlan(plan, plan_id != 0, out);
    if (plans->empty()) out << "no plans recorded\n";
  }
  return out ? kExitOk : kExitUsage;
}

}  // namespace ruleplane::cli
