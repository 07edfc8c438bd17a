// Splits a stream into lines for `plan --batch`, reading large blocks
// (std::getline on a stream tied to stdio reads one character at a time) and
// holding at most one line of `max_line_bytes`: a longer line is skipped up to
// its newline and reported, so a line without an end cannot take the memory.
#pragma once

#include <cstddef>
#include <istream>
#include <string>
#include <vector>

namespace ruleplane::cli {

class LineReader {
 public:
  enum class Read { kLine, kTooLong, kEnd };

  LineReader(std::istream& in, size_t max_line_bytes);

  // kLine with the next line in `line` (without its "\n"), kTooLong when the
  // next line is longer than the bound (`line` is empty; the line counts), kEnd
  // after the last line. A last line without "\n" is a line.
  Read Next(std::string& line);

 private:
  bool Refill();

  std::istream& in_;
  size_t max_line_bytes_;
  std::vector<char> block_;
  size_t position_ = 0;
  size_t end_ = 0;
};

}  // namespace ruleplane::cli
