#include "cli/read_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

namespace ruleplane::cli {

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Error{ErrorCode::kNotFound, "cannot read '" + path + "': " + std::strerror(errno), {}};
  std::ostringstream content;
  content << file.rdbuf();
  if (file.bad()) return Error{ErrorCode::kNotFound, "cannot read '" + path + "': " + std::strerror(errno), {}};
  return content.str();
}

Result<std::string> ReadInput(const std::string& path, std::istream& in) {
  if (path != "-") return ReadFile(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace ruleplane::cli
