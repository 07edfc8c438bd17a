// Reading input files for the CLI ("-" is standard input).
#pragma once

#include <iosfwd>
#include <string>

#include "engine/common/error.h"

namespace ruleplane::cli {

Result<std::string> ReadFile(const std::string& path);
Result<std::string> ReadInput(const std::string& path, std::istream& in);

}  // namespace ruleplane::cli
