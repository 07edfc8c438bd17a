// Where the CLI finds rule files and the action catalogue: on disk (files and
// directories given on the command line) or built into the binary.
//
// A rule reference is a path (a .yaml file, or a directory searched
// recursively) or NAME@VERSION, which selects among the bundled files (or the
// files of the other references) those whose metadata.name is NAME, or which
// live in a folder named NAME, with the highest version that starts with
// VERSION ("2" matches 2.x.y, "1.0" matches 1.0.z).
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "engine/match/compiled_rule_set.h"
#include "engine/rule_file/action_catalogue.h"
#include "engine/rule_file/diagnostics.h"
#include "engine/rule_file/rule_set.h"

namespace ruleplane::cli {

struct RuleFile {
  std::string path;  // as shown in messages
  std::string text;
  std::shared_ptr<const RuleSet> rule_set;  // null when the file has errors
  Diagnostics diagnostics;
};

struct RuleLibrary {
  std::shared_ptr<const ActionCatalogue> catalogue;
  std::vector<RuleFile> files;
};

// Loads the bundled action catalogue and the rule files that `references`
// name (the bundled rule files when `references` is empty). Problems that
// stop loading (an unreadable path, an unknown NAME@VERSION) are written to
// `err`, and the result is then null. Problems inside files are kept in each
// RuleFile's diagnostics.
std::unique_ptr<RuleLibrary> LoadRuleLibrary(const std::vector<std::string>& references, std::ostream& err);

// The NAME@VERSION references of the bundled rules/defaults.txt: what plan
// and explain use without --rules.
std::vector<std::string> DefaultRuleReferences();

// Writes every diagnostic of every file; returns the number of errors.
int PrintDiagnostics(const RuleLibrary& library, std::ostream& err);

// The newest version of each rule-set name among the library's valid files,
// restricted to those whose subject is `subject` (all when empty), compiled,
// in name order. Compile errors are written to `err`.
std::vector<std::shared_ptr<const CompiledRuleSet>> SelectForSubject(const RuleLibrary& library,
                                                                     const std::string& subject,
                                                                     std::ostream& err);

// What SelectForSubject would choose, as exact NAME@VERSION references: how
// another process with the same bundled rules selects them (the controller
// gives member-init its selection through the StatefulSet).
std::vector<std::string> SelectionReferences(const RuleLibrary& library, const std::string& subject);

// What a process that renders StatefulSets (the controller, apply) gives
// member-init as --rules: with --rules given, the library's EtcdMemberInit
// rule sets by exact version; without, none (member-init's bundled defaults).
std::vector<std::string> MemberInitReferences(const RuleLibrary& library, bool rules_given);

// Compares semantic versions: <0, 0, >0.
int CompareVersions(const std::string& a, const std::string& b);

}  // namespace ruleplane::cli
