#include "adapters/local/file_operations.h"

#include <filesystem>

#include "platform/process.h"

namespace ruleplane {
namespace fs = std::filesystem;
namespace {

Error IoError(std::string message) { return Error{ErrorCode::kIo, std::move(message), {}}; }

}  // namespace

Status RunRecorded(const std::vector<std::string>& argv, std::chrono::milliseconds timeout, RequestLog& log) {
  Request request{Request::Kind::kCommand, argv[0], "", {argv.begin() + 1, argv.end()}, "", true};
  if (!log.Record(request)) return {};
  auto result = RunCommand(argv, timeout);
  if (!result.ok()) return result.error();
  if (result->exit_code != 0) {
    return IoError(DescribeRequest(request) + " exited with " + std::to_string(result->exit_code) + ": " +
                   result->err.substr(0, 2000));
  }
  return {};
}

Status RemoveDerived(const std::string& path, const std::string& why, RequestLog& log) {
  if (!fs::exists(path)) return {};
  if (!log.Record(Request{Request::Kind::kFile, "remove", path, {}, why, true})) return {};
  std::error_code error;
  fs::remove_all(path, error);
  if (error) return IoError("cannot remove " + path + ": " + error.message());
  return {};
}

Status MakeDirectory(const std::string& path, RequestLog& log) {
  if (fs::is_directory(path)) return {};
  if (!log.Record(Request{Request::Kind::kFile, "mkdir", path, {}, "", true})) return {};
  std::error_code error;
  fs::create_directories(path, error);
  if (error) return IoError("cannot create " + path + ": " + error.message());
  fs::permissions(path, fs::perms::owner_all, error);
  return {};
}

Status Rename(const std::string& from, const std::string& to, RequestLog& log) {
  if (!log.Record(Request{Request::Kind::kFile, "rename", from, {to}, "", true})) return {};
  std::error_code error;
  fs::rename(from, to, error);
  if (error) return IoError("cannot rename " + from + " to " + to + ": " + error.message());
  return {};
}

bool IsEmptyDirectory(const std::string& path) {
  std::error_code error;
  return fs::is_directory(path, error) && fs::is_empty(path, error);
}

}  // namespace ruleplane
