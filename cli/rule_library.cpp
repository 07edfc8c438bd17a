#include "cli/rule_library.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <ostream>
#include <sstream>

#include "cli/bundled_files.h"
#include "cli/read_file.h"
#include "engine/common/semver.h"
#include "engine/rule_file/rule_loader.h"

namespace ruleplane::cli {
namespace {

namespace fs = std::filesystem;

bool IsYaml(const fs::path& path) { return path.extension() == ".yaml" || path.extension() == ".yml"; }

struct Source {
  std::string path;
  std::string text;
};

std::shared_ptr<const ActionCatalogue> LoadBundledCatalogue(std::ostream& err) {
  std::vector<std::shared_ptr<const ActionCatalogue>> parts;
  for (const BundledFile& file : BundledFiles()) {
    if (!file.path.starts_with("actions/")) continue;
    CatalogueLoadResult loaded = LoadActionCatalogue(file.content, file.path);
    for (const Diagnostic& d : loaded.diagnostics) err << FormatDiagnostic(d, file.content);
    if (!loaded.catalogue) return nullptr;
    parts.push_back(loaded.catalogue);
  }
  CatalogueLoadResult merged = MergeCatalogues(parts);
  for (const Diagnostic& d : merged.diagnostics) err << FormatDiagnostic(d, "");
  return merged.catalogue;
}

std::vector<Source> BundledRuleSources() {
  std::vector<Source> sources;
  for (const BundledFile& file : BundledFiles()) {
    if (file.path.starts_with("rules/") && IsYaml(file.path)) sources.push_back({file.path, file.content});
  }
  return sources;
}

// Reads a file, or every YAML file under a directory (sorted, recursive).
bool ReadSources(const std::string& reference, std::vector<Source>& sources, std::ostream& err) {
  std::error_code ec;
  if (fs::is_directory(reference, ec)) {
    auto paths = ListFiles(reference, {".yaml", ".yml"}, true);
    if (!paths.ok()) {
      err << "ruleplane: " << paths.error().message << "\n";
      return false;
    }
    for (const std::string& path : *paths) {
      if (!ReadSources(path, sources, err)) return false;
    }
    return true;
  }
  auto text = ReadFile(reference);
  if (!text.ok()) {
    err << "ruleplane: " << text.error().message << "\n";
    return false;
  }
  sources.push_back({reference, std::move(*text)});
  return true;
}

bool VersionMatches(const std::string& version, const std::string& wanted) {
  return version == wanted || version.starts_with(wanted + ".") || version.starts_with(wanted + "-");
}

bool NameMatches(const RuleFile& file, const std::string& name) {
  if (file.rule_set->name == name) return true;
  const fs::path parent = fs::path(file.path).parent_path();
  return parent.filename() == name;
}

// Two files that declare the same name@version: an error on the later one
// naming the first, so that no selection depends on the order of paths.
void RejectDuplicateVersions(RuleLibrary& library) {
  std::map<std::string, const RuleFile*> first_by_id;
  for (RuleFile& file : library.files) {
    if (!file.rule_set) continue;
    const auto [first, inserted] = first_by_id.emplace(file.rule_set->id(), &file);
    if (inserted || first->second->path == file.path) continue;
    const RuleSet& earlier = *first->second->rule_set;
    file.diagnostics.push_back(
        {Diagnostic::Severity::kError, file.rule_set->version_position,
         "rule set " + file.rule_set->id() + " is also declared by " + first->second->path + ":" +
             std::to_string(earlier.version_position.line) + "; give one of them another version"});
    file.rule_set = nullptr;
  }
}

}  // namespace

int CompareVersions(const std::string& a, const std::string& b) { return CompareSemver(a, b); }

std::unique_ptr<RuleLibrary> LoadRuleLibrary(const std::vector<std::string>& references, std::ostream& err) {
  auto library = std::make_unique<RuleLibrary>();
  library->catalogue = LoadBundledCatalogue(err);
  if (!library->catalogue) {
    err << "ruleplane: the bundled action catalogue is invalid\n";
    return nullptr;
  }

  std::vector<Source> sources;
  std::vector<std::string> selections;  // NAME@VERSION references
  bool paths_given = false;
  for (const std::string& reference : references) {
    std::error_code ec;
    if (reference.find('@') != std::string::npos && !fs::exists(reference, ec)) {
      selections.push_back(reference);
      continue;
    }
    paths_given = true;
    if (!ReadSources(reference, sources, err)) return nullptr;
  }
  if (!paths_given) {
    sources = BundledRuleSources();
  } else if (sources.empty()) {
    err << "ruleplane: no rule files (*.yaml) found\n";
    return nullptr;
  }

  for (Source& source : sources) {
    RuleLoadResult loaded = LoadRuleFile(source.text, source.path, library->catalogue.get());
    library->files.push_back(
        {source.path, std::move(source.text), loaded.rule_set, std::move(loaded.diagnostics)});
  }
  RejectDuplicateVersions(*library);
  if (selections.empty()) return library;

  std::vector<RuleFile> selected;
  for (const std::string& selection : selections) {
    const std::string name = selection.substr(0, selection.find('@'));
    const std::string version = selection.substr(selection.find('@') + 1);
    // The newest matching version of each matching rule-set name.
    std::map<std::string, const RuleFile*> newest;
    for (const RuleFile& file : library->files) {
      if (!file.rule_set || !NameMatches(file, name) || !VersionMatches(file.rule_set->version, version))
        continue;
      const RuleFile*& best = newest[file.rule_set->name];
      if (best == nullptr || CompareVersions(best->rule_set->version, file.rule_set->version) < 0)
        best = &file;
    }
    if (newest.empty()) {
      err << "ruleplane: no rule file matches '" << selection << "'\n";
      return nullptr;
    }
    for (const auto& [rule_set_name, file] : newest) selected.push_back(*file);
  }
  library->files = std::move(selected);
  return library;
}

std::vector<std::string> DefaultRuleReferences() {
  std::vector<std::string> references;
  for (const BundledFile& file : BundledFiles()) {
    if (file.path != "rules/defaults.txt") continue;
    std::istringstream lines(file.content);
    for (std::string line; std::getline(lines, line);) {
      line.erase(0, line.find_first_not_of(" \t"));
      line.erase(line.find_last_not_of(" \t\r") + 1);
      if (!line.empty() && line.front() != '#') references.push_back(line);
    }
  }
  return references;
}

int PrintDiagnostics(const RuleLibrary& library, std::ostream& err) {
  int errors = 0;
  for (const RuleFile& file : library.files) {
    for (const Diagnostic& d : file.diagnostics) {
      err << FormatDiagnostic(d, file.text);
      if (d.severity == Diagnostic::Severity::kError) ++errors;
    }
  }
  return errors;
}

namespace {

// The newest valid file of each rule-set name whose subject is `subject` (all when empty), by name.
std::map<std::string, const RuleFile*> NewestOfSubject(const RuleLibrary& library,
                                                       const std::string& subject) {
  std::map<std::string, const RuleFile*> newest;
  for (const RuleFile& file : library.files) {
    if (!file.rule_set || (!subject.empty() && file.rule_set->subject != subject)) continue;
    const RuleFile*& best = newest[file.rule_set->name];
    if (best == nullptr || CompareVersions(best->rule_set->version, file.rule_set->version) < 0) best = &file;
  }
  return newest;
}

}  // namespace

std::vector<std::shared_ptr<const CompiledRuleSet>> SelectForSubject(const RuleLibrary& library,
                                                                     const std::string& subject,
                                                                     std::ostream& err) {
  std::vector<std::shared_ptr<const CompiledRuleSet>> compiled;
  for (const auto& [name, file] : NewestOfSubject(library, subject)) {
    auto result = CompiledRuleSet::Compile(file->rule_set);
    if (!result.ok()) {
      err << file->path << ": error: " << result.error().message << "\n";
      continue;
    }
    compiled.push_back(*result);
  }
  return compiled;
}

std::vector<std::string> MemberInitReferences(const RuleLibrary& library, bool rules_given) {
  return rules_given ? SelectionReferences(library, "EtcdMemberInit") : std::vector<std::string>{};
}

std::vector<std::string> SelectionReferences(const RuleLibrary& library, const std::string& subject) {
  std::vector<std::string> references;
  for (const auto& [name, file] : NewestOfSubject(library, subject))
    references.push_back(name + "@" + file->rule_set->version);
  return references;
}

}  // namespace ruleplane::cli
