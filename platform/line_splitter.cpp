#include "platform/line_splitter.h"

#include "platform/file_input.h"
#include "platform/http_client.h"

namespace ruleplane {

Error LineSplitter::TooLong() const {
  return Error{ErrorCode::kUnavailable,
               "a line of " + stream_ + " is longer than " +
                   FormatBytes(static_cast<int64_t>(max_line_bytes_)) +
                   " (the bound for one message of it); stopped there",
               {}};
}

Result<bool> LineSplitter::Feed(std::string_view data,
                                const std::function<bool(std::string_view line)>& on_line) {
  if (over_) return TooLong();
  while (!data.empty()) {
    const size_t end = data.find('\n');
    const size_t length = end == std::string_view::npos ? data.size() : end;
    if (pending_.size() + length > max_line_bytes_) {
      over_ = true;
      pending_.clear();
      return TooLong();
    }
    if (end == std::string_view::npos) {
      pending_.append(data);
      return true;
    }
    bool go_on;
    if (pending_.empty()) {
      go_on = on_line(data.substr(0, end));
    } else {
      pending_.append(data.substr(0, end));
      std::string line;
      line.swap(pending_);
      go_on = on_line(line);
    }
    data.remove_prefix(end + 1);
    if (!go_on) return false;
  }
  return true;
}

}  // namespace ruleplane
