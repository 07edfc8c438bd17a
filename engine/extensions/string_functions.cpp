#include "engine/extensions/string_functions.h"

#include <algorithm>
#include <string>

namespace ruleplane::expr {
namespace {

constexpr size_t kNotFound = std::string_view::npos;

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

int64_t CodePointsIn(std::string_view text) {
  int64_t count = 0;
  for (const char c : text) count += !IsContinuationByte(c);
  return count;
}

// The byte offset where the code point after the one at `pos` starts.
size_t NextCodePoint(std::string_view text, size_t pos) {
  ++pos;
  while (pos < text.size() && IsContinuationByte(text[pos])) ++pos;
  return pos;
}

// The byte offset of code point `index` (0 <= index <= its code point count).
size_t ByteOffset(std::string_view text, int64_t index) {
  size_t pos = 0;
  for (int64_t i = 0; i < index; ++i) pos = NextCodePoint(text, pos);
  return pos;
}

Value IndexOutOfRange(std::string_view function, int64_t index, int64_t size) {
  return Value::Error(std::string(function) + ": index out of range: " + std::to_string(index) + " (size " +
                      std::to_string(size) + ")");
}

// Decodes the UTF-8 sequence at `pos`; `length` is its byte count. An invalid
// sequence decodes as U+FFFD with length 1.
char32_t DecodeAt(std::string_view text, size_t pos, size_t& length) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  length = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 0;
  if (length == 0 || pos + length > text.size()) {
    length = 1;
    return 0xFFFD;
  }
  if (length == 1) return lead;
  char32_t code_point = lead & (0x7F >> length);
  for (size_t i = 1; i < length; ++i) {
    if (!IsContinuationByte(text[pos + i])) {
      length = 1;
      return 0xFFFD;
    }
    code_point = (code_point << 6) | (static_cast<unsigned char>(text[pos + i]) & 0x3F);
  }
  return code_point;
}

// Unicode's White_Space property (Go's unicode.IsSpace, which cel-go's trim uses).
bool IsWhiteSpace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

Value MapAscii(const Value& text, char from_first, char from_last) {
  const std::string& s = text.string_value();
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] < from_first || s[i] > from_last) continue;
    if (out.empty()) out = s;
    out[i] = static_cast<char>(s[i] ^ 0x20);  // ASCII letters differ in case by bit 5
  }
  return out.empty() ? text : Value::String(std::move(out));
}

}  // namespace

Value SplitString(const Value& text, std::string_view separator, int64_t limit) {
  const std::string_view s = text.string_value();
  Value::List parts;
  if (limit == 0) return Value::MakeList(std::move(parts));
  size_t pos = 0;
  if (separator.empty()) {
    const int64_t count = CodePointsIn(s);
    if (limit < 0 || limit > count) limit = count;
    parts.reserve(static_cast<size_t>(limit));
    for (int64_t i = 0; i + 1 < limit; ++i) {
      const size_t next = NextCodePoint(s, pos);
      parts.push_back(Value::String(std::string(s.substr(pos, next - pos))));
      pos = next;
    }
    if (limit > 0) parts.push_back(Value::String(std::string(s.substr(pos))));
    return Value::MakeList(std::move(parts));
  }
  while (limit < 0 || static_cast<int64_t>(parts.size()) + 1 < limit) {
    const size_t found = s.find(separator, pos);
    if (found == kNotFound) break;
    parts.push_back(Value::String(std::string(s.substr(pos, found - pos))));
    pos = found + separator.size();
  }
  parts.push_back(Value::String(std::string(s.substr(pos))));
  return Value::MakeList(std::move(parts));
}

Value Substring(const Value& text, int64_t start, std::optional<int64_t> end) {
  const std::string_view s = text.string_value();
  const int64_t size = CodePointsIn(s);
  const int64_t stop = end.value_or(size);
  if (end && start > stop) {
    return Value::Error("substring: invalid range: start " + std::to_string(start) + " is after end " +
                        std::to_string(stop));
  }
  if (start < 0 || start > size) return IndexOutOfRange("substring", start, size);
  if (stop > size) return IndexOutOfRange("substring", stop, size);
  if (start == 0 && stop == size) return text;
  const size_t begin = ByteOffset(s, start);
  const size_t finish = begin + ByteOffset(s.substr(begin), stop - start);
  return Value::String(std::string(s.substr(begin, finish - begin)));
}

Value IndexOf(const Value& text, std::string_view part, int64_t offset) {
  const std::string_view s = text.string_value();
  const int64_t size = CodePointsIn(s);
  if (offset < 0 || offset > size) return IndexOutOfRange("indexOf", offset, size);
  if (part.empty()) return Value::Int(offset);
  const size_t from = ByteOffset(s, offset);
  const size_t found = s.find(part, from);
  if (found == kNotFound) return Value::Int(-1);
  return Value::Int(offset + CodePointsIn(s.substr(from, found - from)));
}

Value LastIndexOf(const Value& text, std::string_view part) {
  const std::string_view s = text.string_value();
  if (part.empty()) return Value::Int(CodePointsIn(s));
  const size_t found = s.rfind(part);
  if (found == kNotFound) return Value::Int(-1);
  return Value::Int(CodePointsIn(s.substr(0, found)));
}

Value LowerAscii(const Value& text) { return MapAscii(text, 'A', 'Z'); }

Value UpperAscii(const Value& text) { return MapAscii(text, 'a', 'z'); }

Value ReplaceString(const Value& text, std::string_view old_part, std::string_view new_part, int64_t limit) {
  const std::string_view s = text.string_value();
  if (limit == 0 || old_part == new_part) return text;
  std::string out;
  size_t pos = 0;
  int64_t replaced = 0;
  if (old_part.empty()) {
    // An empty `old` matches before every code point and at the end.
    for (; limit < 0 || replaced < limit; ++replaced) {
      if (replaced > 0) {
        if (pos >= s.size()) break;
        const size_t next = NextCodePoint(s, pos);
        out.append(s.substr(pos, next - pos));
        pos = next;
      }
      out.append(new_part);
    }
  } else {
    for (; limit < 0 || replaced < limit; ++replaced) {
      const size_t found = s.find(old_part, pos);
      if (found == kNotFound) break;
      out.append(s.substr(pos, found - pos));
      out.append(new_part);
      pos = found + old_part.size();
    }
    if (replaced == 0) return text;
  }
  out.append(s.substr(pos));
  return Value::String(std::move(out));
}

Value TrimString(const Value& text) {
  const std::string_view s = text.string_value();
  size_t begin = 0, end = s.size();
  size_t length = 0;
  while (begin < end && IsWhiteSpace(DecodeAt(s, begin, length))) begin += length;
  while (end > begin) {
    size_t last = end - 1;
    while (last > begin && IsContinuationByte(s[last]) && end - last < 4) --last;
    if (!IsWhiteSpace(DecodeAt(s, last, length)) || last + length != end) break;
    end = last;
  }
  if (begin == 0 && end == s.size()) return text;
  return Value::String(std::string(s.substr(begin, end - begin)));
}

int64_t ReplacedSize(const Value& text, std::string_view old_part, std::string_view new_part, int64_t limit) {
  const std::string_view s = text.string_value();
  if (limit == 0 || old_part == new_part) return 0;
  int64_t replaced = 0;
  if (old_part.empty()) {
    // Before every code point and at the end.
    const int64_t points = std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; });
    replaced = limit < 0 ? points + 1 : std::min(limit, points + 1);
  } else {
    for (size_t pos = s.find(old_part); pos != kNotFound && (limit < 0 || replaced < limit);
         pos = s.find(old_part, pos + old_part.size())) {
      ++replaced;
    }
  }
  return static_cast<int64_t>(s.size()) +
         replaced * (static_cast<int64_t>(new_part.size()) - static_cast<int64_t>(old_part.size()));
}

int64_t JoinedSize(const Value& list, std::string_view separator) {
  int64_t total = 0;
  for (const Value& item : list.list_value()) {
    if (item.is_string()) total += static_cast<int64_t>(item.string_value().size() + separator.size());
  }
  return total;
}

Value JoinStrings(const Value& list, std::string_view separator) {
  const Value::List& items = list.list_value();
  size_t total = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].is_string()) {
      return Value::Error("join: expected a list of strings, element " + std::to_string(i) + " is " +
                          items[i].TypeName());
    }
    total += items[i].string_value().size() + separator.size();
  }
  if (items.size() == 1) return items[0];
  std::string out;
  out.reserve(total);
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out.append(separator);
    out.append(items[i].string_value());
  }
  return Value::String(std::move(out));
}

}  // namespace ruleplane::expr
