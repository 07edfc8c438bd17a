#include "cli/flags.h"

#include <algorithm>
#include <ostream>

#include "engine/common/time_util.h"

namespace ruleplane::cli {

bool HelpRequested(const Args& args) {
  for (const std::string& arg : args) {
    if (arg == "--") return false;
    if (arg == "-h" || arg == "--help") return true;
  }
  return false;
}

int PrintUsage(std::string_view usage, std::ostream& out) {
  out << usage;
  return kExitOk;
}

bool Flags::IsOption(std::string_view arg) const {
  if (arg.size() < 2 || arg[0] != '-') return false;
  if (shape_ == OptionShape::kAnyDash) return true;
  // --name[=value] with a name of letters, digits and dashes, or -x.
  const auto is_letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (arg.size() == 2 && arg[0] == '-' && is_letter(arg[1])) return true;
  if (arg.size() < 3 || !arg.starts_with("--") || !is_letter(arg[2])) return false;
  const std::string_view name = arg.substr(2, arg.find('=') - 2);
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return is_letter(c) || (c >= '0' && c <= '9') || c == '-'; });
}

const FlagSpec* Flags::Find(std::string_view name) const {
  for (const FlagSpec& spec : specs_) {
    if (spec.name == name || (!spec.short_name.empty() && spec.short_name == name)) return &spec;
  }
  return nullptr;
}

bool Flags::Parse(const Args& args, std::ostream& err, std::string_view usage) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      positional_.insert(positional_.end(), args.begin() + static_cast<long>(i) + 1, args.end());
      return true;
    }
    if (!IsOption(arg)) {
      positional_.push_back(arg);
      continue;
    }
    const size_t equals = arg.find('=');
    const std::string name = arg.substr(0, equals);
    const FlagSpec* spec = Find(name);
    if (spec == nullptr) {
      err << "ruleplane: unknown flag " << name << " (an argument that starts with '-' goes after --)\n"
          << usage;
      return false;
    }
    std::vector<std::string>& values = values_[spec->name];
    if (!spec->takes_value) {
      if (equals != std::string::npos) {
        err << "ruleplane: " << name << " takes no value\n" << usage;
        return false;
      }
      values.push_back("true");
    } else if (equals != std::string::npos) {
      values.push_back(arg.substr(equals + 1));
    } else if (i + 1 < args.size()) {
      values.push_back(args[++i]);
    } else {
      err << "ruleplane: " << name << " needs a value\n" << usage;
      return false;
    }
  }
  return true;
}

std::string Flags::Get(const std::string& name, const std::string& fallback) const {
  auto found = values_.find(name);
  return found == values_.end() ? fallback : found->second.back();
}

bool Flags::GetCount(const std::string& name, int64_t& count, std::ostream& err) const {
  if (!Has(name)) return true;
  const std::string value = Get(name);
  if (value.empty() || value.size() > 18 || value.find_first_not_of("0123456789") != std::string::npos) {
    err << "ruleplane: " << name << " takes a whole number, got '" << value << "'\n";
    return false;
  }
  count = std::stoll(value);
  return true;
}

bool Flags::GetDuration(const std::string& name, std::chrono::nanoseconds& duration,
                        std::ostream& err) const {
  if (!Has(name)) return true;
  const std::string value = Get(name);
  auto parsed = ParseDuration(value);
  if (!parsed.ok()) {
    err << "ruleplane: " << name << ": " << parsed.error().message << "\n";
    return false;
  }
  if (parsed->nanos < 0) {
    err << "ruleplane: " << name << " takes a duration >= 0, got '" << value << "'\n";
    return false;
  }
  duration = std::chrono::nanoseconds(parsed->nanos);
  return true;
}

bool Flags::GetBool(const std::string& name, bool& value, std::ostream& err) const {
  if (!Has(name)) return true;
  const std::string given = Get(name);
  if (given != "true" && given != "false") {
    err << "ruleplane: " << name << " takes true or false, got '" << given << "'\n";
    return false;
  }
  value = given == "true";
  return true;
}

bool Flags::GetUrls(const std::string& name, std::vector<std::string>& urls, std::ostream& err) const {
  urls = GetList(name);
  for (const std::string& url : urls) {
    if (Status usable = CheckHttpUrl(url); !usable.ok()) {
      err << "ruleplane: " << name << ": " << usable.error().message << "\n";
      return false;
    }
  }
  return true;
}

std::vector<std::string> Flags::GetAll(const std::string& name) const {
  auto found = values_.find(name);
  return found == values_.end() ? std::vector<std::string>{} : found->second;
}

std::vector<std::string> Flags::GetList(const std::string& name) const {
  std::vector<std::string> items;
  auto found = values_.find(name);
  if (found == values_.end()) return items;
  for (const std::string& value : found->second) {
    size_t start = 0;
    while (start <= value.size()) {
      size_t comma = value.find(',', start);
      if (comma == std::string::npos) comma = value.size();
      if (comma > start) items.push_back(value.substr(start, comma - start));
      start = comma + 1;
    }
  }
  return items;
}

bool Flags::Require(const std::vector<std::string>& names, std::ostream& err, std::string_view usage) const {
  for (const std::string& name : names) {
    if (!Has(name)) {
      err << "ruleplane: " << name << " is required\n" << usage;
      return false;
    }
  }
  return true;
}

bool Flags::RequirePositional(size_t min, size_t max, std::string_view what, std::ostream& err,
                              std::string_view usage) const {
  if (positional_.size() < min) {
    err << "ruleplane: missing the " << what << "\n" << usage;
    return false;
  }
  if (positional_.size() > max) {
    err << "ruleplane: unexpected argument '" << positional_[max]
        << "' (quote an argument with spaces in it)\n"
        << usage;
    return false;
  }
  return true;
}

TlsConfig TlsFromFlags(const Flags& flags) {
  TlsConfig tls;
  tls.ca_file = flags.Get("--cacert");
  tls.cert_file = flags.Get("--cert");
  tls.key_file = flags.Get("--key");
  return tls;
}

}  // namespace ruleplane::cli
