// Reading input files for the CLI ("-" is standard input). Every failure is
// an Error naming the path and why: a missing file, a directory where a file
// is expected, a loop of symbolic links, a FIFO or device (refused by type),
// a file or standard input over kMaxCliInputBytes (256 MiB,
// platform/file_input.h).
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/error.h"

namespace ruleplane::cli {

// Whether `path` can be opened as a file; the error otherwise.
std::optional<Error> CheckFile(const std::string& path);
Result<std::string> ReadFile(const std::string& path);
Result<std::string> ReadInput(const std::string& path, std::istream& in);

// The files under `directory` whose names end in one of `extensions`, sorted;
// with `recursive`, those of its sub-directories too (symbolic links to
// directories are not followed). A link that loops or dangles is an error.
Result<std::vector<std::string>> ListFiles(const std::string& directory,
                                           const std::vector<std::string_view>& extensions, bool recursive);

}  // namespace ruleplane::cli
