#include "engine/verify/verification_report.h"

#include <algorithm>
#include <numeric>

namespace ruleplane {
namespace {

std::string Plural(uint64_t count, const std::string& singular, const std::string& plural) {
  return std::to_string(count) + " " + (count == 1 ? singular : plural);
}

std::string PositionSuffix(const SourcePosition& position) {
  if (!position.known()) return "";
  return " (" + position.file + ":" + std::to_string(position.line) + ":" + std::to_string(position.column) +
         ")";
}

void AppendFinding(std::string& out, const Finding& finding, const VerificationReport& report,
                   int max_regions, const std::string& indent) {
  const bool cause = finding.kind == Finding::Kind::kMaskedBy;
  out += indent;
  if (finding.kind == Finding::Kind::kChanged) {
    out += "changed: ";
  } else if (!cause) {
    out += finding.severity == Diagnostic::Severity::kError ? "error: " : "warning: ";
  }
  out += finding.message + PositionSuffix(finding.position);
  if (!finding.regions.empty()) {
    out += ": " + Plural(finding.states, "state", "states");
    if (finding.regions.size() > 1) out += " in " + std::to_string(finding.regions.size()) + " regions";
  }
  out += "\n";
  std::vector<int> order(report.names.size());
  std::iota(order.begin(), order.end(), 0);
  const size_t shown =
      max_regions > 0 ? std::min<size_t>(max_regions, finding.regions.size()) : finding.regions.size();
  for (size_t i = 0; i < shown; ++i) {
    const Region& region = finding.regions[i];
    out += indent + "  " + FormatRegion(region, report.names, order);
    if (finding.regions.size() > 1) out += "  (" + Plural(region.states, "state", "states") + ")";
    out += "\n" + indent + "    e.g. " + FormatExample(region, report.names, order) + "\n";
  }
  if (shown < finding.regions.size()) {
    out += indent + "  ... " + Plural(finding.regions.size() - shown, "more region", "more regions") + "\n";
  }
  for (const Finding& sub : finding.causes) AppendFinding(out, sub, report, max_regions, indent + "  ");
}

}  // namespace

int VerificationReport::Count(Diagnostic::Severity severity) const {
  int count = 0;
  for (const Finding& finding : findings) count += finding.severity == severity ? 1 : 0;
  return count;
}

void MergeFindingRegions(Finding& finding,
                         const std::vector<std::optional<std::vector<Value>>>& full_domains) {
  finding.regions = MergeRegions(std::move(finding.regions), full_domains);
  std::stable_sort(finding.regions.begin(), finding.regions.end(),
                   [](const Region& a, const Region& b) { return a.states > b.states; });
  for (Finding& cause : finding.causes) MergeFindingRegions(cause, full_domains);
}

std::string FormatVerificationReport(const VerificationReport& report, int max_regions) {
  std::string out = report.title + "\n";
  if (!report.enumeration_order.empty()) {
    out += "  enumerated: ";
    for (size_t i = 0; i < report.enumeration_order.size(); ++i) {
      out += (i ? ", " : "") + report.enumeration_order[i];
    }
    std::string derived;
    for (size_t i = 0; i < report.names.size(); ++i) {
      if (!report.inputs[i]) derived += (derived.empty() ? "" : ", ") + report.names[i];
    }
    if (!derived.empty()) out += "; derived: " + derived;
    out += "\n";
  }
  for (const Finding& finding : report.findings) AppendFinding(out, finding, report, max_regions, "  ");
  out += "  " + Plural(report.states, "state", "states") + ", " +
         Plural(report.evaluations, "evaluation", "evaluations") + ": ";
  if (report.diff) {
    size_t differences = 0;
    for (const Finding& finding : report.findings)
      differences += finding.kind == Finding::Kind::kChanged ? 1 : 0;
    out += Plural(differences, "difference", "differences") + "\n";
    return out;
  }
  const int errors = report.Count(Diagnostic::Severity::kError);
  const int warnings = report.Count(Diagnostic::Severity::kWarning);
  out += Plural(errors, "error", "errors") + ", " + Plural(warnings, "warning", "warnings") + "\n";
  return out;
}

}  // namespace ruleplane
