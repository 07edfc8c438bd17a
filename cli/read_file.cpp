#include "cli/read_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "platform/file_input.h"

namespace ruleplane::cli {
namespace {

namespace fs = std::filesystem;

Error ReadError(const std::string& path, const std::string& why) {
  return Error{ErrorCode::kNotFound, "cannot read '" + path + "': " + why, {}};
}

std::string Why(const std::error_code& ec) {
  return ec == std::errc::too_many_symbolic_link_levels ? "a loop of symbolic links" : ec.message();
}

bool EndsWithOneOf(const std::string& name, const std::vector<std::string_view>& extensions) {
  return std::any_of(extensions.begin(), extensions.end(),
                     [&](std::string_view extension) { return name.ends_with(extension); });
}

}  // namespace

std::optional<Error> CheckFile(const std::string& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec) return ReadError(path, Why(ec));
  if (fs::is_directory(status)) return ReadError(path, "it is a directory, not a file");
  return std::nullopt;
}

Result<std::string> ReadFile(const std::string& path) {
  if (std::optional<Error> error = CheckFile(path)) return *error;
  auto content = ReadRegularFile(path, kMaxCliInputBytes);
  if (!content.ok()) return Error{ErrorCode::kNotFound, content.error().message, {}};
  return content;
}

Result<std::string> ReadInput(const std::string& path, std::istream& in) {
  if (path != "-") return ReadFile(path);
  auto text = ReadBoundedStream(in, kMaxCliInputBytes, "standard input");
  if (!text.ok()) return ReadError("-", text.error().message);
  return text;
}

Result<std::vector<std::string>> ListFiles(const std::string& directory,
                                           const std::vector<std::string_view>& extensions, bool recursive) {
  std::vector<std::string> paths;
  std::error_code ec;
  auto visit = [&](const fs::directory_entry& entry) -> std::optional<Error> {
    const std::string path = entry.path().string();
    if (!EndsWithOneOf(entry.path().filename().string(), extensions)) return std::nullopt;
    std::error_code status_error;
    const bool regular = entry.is_regular_file(status_error);
    if (status_error) return ReadError(path, Why(status_error));
    if (regular) paths.push_back(path);
    return std::nullopt;
  };
  if (recursive) {
    for (auto it = fs::recursive_directory_iterator(directory, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (std::optional<Error> error = visit(*it)) return *error;
    }
  } else {
    for (auto it = fs::directory_iterator(directory, ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
      if (std::optional<Error> error = visit(*it)) return *error;
    }
  }
  if (ec) return Error{ErrorCode::kNotFound, "cannot list '" + directory + "': " + Why(ec), {}};
  std::sort(paths.begin(), paths.end());
  return paths;
}

}  // namespace ruleplane::cli
