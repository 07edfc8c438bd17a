#include "cli/line_reader.h"

#include <algorithm>
#include <cstring>

namespace ruleplane::cli {

LineReader::LineReader(std::istream& in, size_t max_line_bytes)
    : in_(in), max_line_bytes_(max_line_bytes), block_(std::min<size_t>(max_line_bytes + 1, 1 << 20)) {}

bool LineReader::Refill() {
  position_ = end_ = 0;
  if (!in_) return false;
  in_.read(block_.data(), static_cast<std::streamsize>(block_.size()));
  end_ = static_cast<size_t>(in_.gcount());
  return end_ > 0;
}

LineReader::Read LineReader::Next(std::string& line) {
  line.clear();
  bool too_long = false;
  bool any = false;
  while (position_ < end_ || Refill()) {
    any = true;
    const char* begin = block_.data() + position_;
    const size_t available = end_ - position_;
    const char* newline = static_cast<const char*>(std::memchr(begin, '\n', available));
    const size_t length = newline != nullptr ? static_cast<size_t>(newline - begin) : available;
    if (!too_long && line.size() + length > max_line_bytes_) {
      too_long = true;
      std::string().swap(line);
    }
    if (!too_long) line.append(begin, length);
    position_ += length;
    if (newline != nullptr) {
      ++position_;
      return too_long ? Read::kTooLong : Read::kLine;
    }
  }
  if (!any) return Read::kEnd;
  return too_long ? Read::kTooLong : Read::kLine;
}

}  // namespace ruleplane::cli
