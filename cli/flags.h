// Flags of the acting commands (member-init, observe, backup): --name VALUE or
// --name=VALUE, boolean switches, repeated flags, "--" ending the options.
//
//   Flags flags({{"--data-dir", true}, {"--dry-run", false}});
//   if (!flags.Parse(args, err, kUsage)) return kExitUsage;
//   std::string dir = flags.Get("--data-dir");
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "platform/http_client.h"

namespace ruleplane::cli {

struct FlagSpec {
  std::string name;
  bool takes_value = true;
};

class Flags {
 public:
  explicit Flags(std::vector<FlagSpec> specs) : specs_(std::move(specs)) {}

  // False, with the problem and the usage written to `err`, on an unknown
  // flag or a missing value.
  bool Parse(const Args& args, std::ostream& err, const char* usage);

  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  // The last value given, or `fallback`.
  std::string Get(const std::string& name, const std::string& fallback = "") const;
  // Every value given, comma-separated values split.
  std::vector<std::string> GetList(const std::string& name) const;
  // GetList's values into `urls`, each an http:// or https:// URL; false,
  // with the problem written to `err`, when one is not.
  bool GetUrls(const std::string& name, std::vector<std::string>& urls, std::ostream& err) const;
  // A whole number >= 0 into `count` when the flag is given (kept otherwise);
  // false, with the problem written to `err`, when its value is not one.
  bool GetCount(const std::string& name, int64_t& count, std::ostream& err) const;
  const std::vector<std::string>& positional() const { return positional_; }

  // Writes "ruleplane: NAME is required" and the usage when a flag is missing.
  bool Require(const std::vector<std::string>& names, std::ostream& err, const char* usage) const;

 private:
  std::vector<FlagSpec> specs_;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
};

// TLS to etcd from --cacert, --cert and --key.
TlsConfig TlsFromFlags(const Flags& flags);

}  // namespace ruleplane::cli
