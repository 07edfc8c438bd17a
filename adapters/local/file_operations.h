// The file operations and commands a step performs on a member's files, each
// recorded in the step's RequestLog first: in a dry run it is recorded and
// not performed. Data is never deleted here: RemoveDerived removes only what
// a step derived itself (a decompressed copy, a partial restore).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "adapters/request.h"
#include "engine/common/error.h"

namespace ruleplane {

// Runs `argv`; its failure names the command and what it printed.
Status RunRecorded(const std::vector<std::string>& argv, std::chrono::milliseconds timeout, RequestLog& log);

// Removes `path` (a file or a directory) when it exists; `why` says what it held.
Status RemoveDerived(const std::string& path, const std::string& why, RequestLog& log);

// Creates the directory `path` (owner only) when there is none.
Status MakeDirectory(const std::string& path, RequestLog& log);

Status Rename(const std::string& from, const std::string& to, RequestLog& log);

// Whether `path` is a directory with nothing in it (reads only: not recorded).
bool IsEmptyDirectory(const std::string& path);

}  // namespace ruleplane
