// LineSplitter: a stream of newline-delimited messages (etcd's snapshot and
// watch streams, the API server's watches) cut into lines as it arrives.
// Each byte is looked at once, however the stream is sliced (a line without
// a newline does not make every later slice rescan it), and an unfinished
// line is held only up to `max_line_bytes`: a longer one is an error naming
// the bound, and nothing more is kept.
//
//   LineSplitter lines(1024 * 1024, "the watch stream");
//   auto fed = lines.Feed(data, [&](std::string_view line) { ...; return true; });
//   if (!fed.ok()) ...       // a line over the bound
//   else if (!*fed) ...      // on_line returned false: stop
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "engine/common/error.h"

namespace ruleplane {

class LineSplitter {
 public:
  // `stream` names it in the error: "etcd's watch stream".
  LineSplitter(size_t max_line_bytes, std::string stream)
      : max_line_bytes_(max_line_bytes), stream_(std::move(stream)) {}

  // Calls `on_line` with each line that `data` completes (without its "\n";
  // a "\r" before it is kept). True to go on; false when `on_line` returned
  // false (the rest of `data` is dropped); kUnavailable when a line is longer
  // than the bound (and every later Feed fails the same way).
  Result<bool> Feed(std::string_view data, const std::function<bool(std::string_view line)>& on_line);

  // What has arrived of a line not yet ended (at most the bound).
  std::string_view pending() const { return pending_; }
  size_t max_line_bytes() const { return max_line_bytes_; }

 private:
  Error TooLong() const;

  size_t max_line_bytes_;
  std::string stream_;
  std::string pending_;
  bool over_ = false;
};

}  // namespace ruleplane
