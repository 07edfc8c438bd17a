// The one flag parser of every command: --name VALUE or --name=VALUE, -x VALUE,
// boolean switches, repeated flags, and "--" ending the options.
//
//   Flags flags({{"--data-dir"}, {"--dry-run", false}, {"--input", true, "-i"}});
//   if (!flags.Parse(args, err, kUsage)) return kExitUsage;
//   std::string dir = flags.Get("--data-dir");
//
// An argument that starts with '-' is an option, except "-" (standard input)
// and everything after "--". A command whose positional argument may start
// with '-' (eval's "-1 + 2") takes only --name[=value] and -x as options.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "platform/http_client.h"

namespace ruleplane::cli {

struct FlagSpec {
  std::string name;
  bool takes_value = true;
  std::string short_name = {};  // "-i" for --input; values are kept under `name`
};

enum class OptionShape { kAnyDash, kNameOrLetter };

class Flags {
 public:
  explicit Flags(std::vector<FlagSpec> specs, OptionShape shape = OptionShape::kAnyDash)
      : specs_(std::move(specs)), shape_(shape) {}

  // False, with the problem and the usage written to `err`, on an unknown
  // flag or a missing value.
  bool Parse(const Args& args, std::ostream& err, std::string_view usage);

  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  // The last value given, or `fallback`.
  std::string Get(const std::string& name, const std::string& fallback = "") const;
  // Every value given, in order, as given.
  std::vector<std::string> GetAll(const std::string& name) const;
  // Every value given, comma-separated values split.
  std::vector<std::string> GetList(const std::string& name) const;
  // GetList's values into `urls`, each an http:// or https:// URL; false,
  // with the problem written to `err`, when one is not.
  bool GetUrls(const std::string& name, std::vector<std::string>& urls, std::ostream& err) const;
  // A whole number >= 0 into `count` when the flag is given (kept otherwise);
  // false, with the problem written to `err`, when its value is not one.
  bool GetCount(const std::string& name, int64_t& count, std::ostream& err) const;
  // A Go duration ("20s", "1m30s", "500ms", "0"), as etcd-backup-restore's
  // flags take them, into `duration` when the flag is given; false, with the
  // problem written to `err`, when it does not parse or is negative.
  bool GetDuration(const std::string& name, std::chrono::nanoseconds& duration, std::ostream& err) const;
  // "true" or "false" (Go's --flag=true) into `value` when the flag is given.
  bool GetBool(const std::string& name, bool& value, std::ostream& err) const;
  const std::vector<std::string>& positional() const { return positional_; }

  // Writes "ruleplane: NAME is required" and the usage when a flag is missing.
  bool Require(const std::vector<std::string>& names, std::ostream& err, std::string_view usage) const;
  // Writes what is wrong and the usage unless between `min` and `max`
  // positional arguments were given; `what` names one ("snapshot", "path").
  bool RequirePositional(size_t min, size_t max, std::string_view what, std::ostream& err,
                         std::string_view usage) const;

 private:
  const FlagSpec* Find(std::string_view name) const;

  bool IsOption(std::string_view arg) const;

  std::vector<FlagSpec> specs_;
  OptionShape shape_;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
};

// TLS to etcd from --cacert, --cert and --key.
TlsConfig TlsFromFlags(const Flags& flags);

}  // namespace ruleplane::cli
