#include "engine/expr/lexer.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>
#include <system_error>

#include "engine/common/ascii.h"

namespace ruleplane::expr {
namespace {

bool IsHexDigit(char c) { return IsAsciiDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsIdentPart(char c) { return IsIdentStart(c) || IsAsciiDigit(c); }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

int HexValue(char c) {
  if (IsAsciiDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

void AppendUtf8(uint32_t code_point, std::string& out) {
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    out += static_cast<char>(0xC0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    out += static_cast<char>(0xE0 | (code_point >> 12));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code_point >> 18));
    out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  }
}

// Whether a decimal literal out of a double's range is too small rather than
// too large: the first significant digit's power of ten plus the exponent.
bool Underflows(std::string_view text) {
  const size_t e = text.find_first_of("eE");
  int64_t exponent = 0;
  if (e != std::string_view::npos) {
    std::string_view digits = text.substr(e + 1);
    const bool negative = !digits.empty() && digits[0] == '-';
    if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) digits.remove_prefix(1);
    for (const char c : digits) exponent = std::min<int64_t>(exponent * 10 + (c - '0'), 1000000);
    if (negative) exponent = -exponent;
  }
  const std::string_view mantissa = text.substr(0, e);
  const size_t point = std::min(mantissa.find('.'), mantissa.size());
  const size_t first = mantissa.find_first_of("123456789");
  if (first == std::string_view::npos) return true;
  const int64_t position =
      first < point ? static_cast<int64_t>(point - first - 1) : -static_cast<int64_t>(first - point);
  return position + exponent < 0;
}

std::string DescribeChar(char c) {
  const auto byte = static_cast<unsigned char>(c);
  if (byte < 0x20 || byte >= 0x7f) {
    static constexpr char kHex[] = "0123456789abcdef";
    return std::string("byte 0x") + kHex[byte >> 4] + kHex[byte & 0xf];
  }
  return std::string("'") + c + "'";
}

}  // namespace

std::string DescribeToken(const Token& token) {
  switch (token.kind) {
    case Token::Kind::kEnd:
      return "end of input";
    case Token::Kind::kString:
      return "string literal";
    default:
      return "'" + std::string(token.text) + "'";
  }
}

Token Lexer::MakeError(size_t offset, std::string message) {
  Token token;
  token.kind = Token::Kind::kError;
  token.offset = static_cast<int>(offset);
  token.text = source_.substr(offset, pos_ > offset ? pos_ - offset : 0);
  token.string_value = std::move(message);
  pos_ = source_.size();
  return token;
}

Token Lexer::Next() {
  // Skip whitespace and // comments.
  while (pos_ < source_.size()) {
    if (IsSpace(source_[pos_])) {
      ++pos_;
    } else if (source_.substr(pos_, 2) == "//") {
      while (pos_ < source_.size() && source_[pos_] != '\n') ++pos_;
    } else {
      break;
    }
  }
  Token token;
  token.offset = static_cast<int>(pos_);
  if (pos_ >= source_.size()) {
    token.kind = Token::Kind::kEnd;
    return token;
  }
  const char c = source_[pos_];
  if (IsAsciiDigit(c) || (c == '.' && pos_ + 1 < source_.size() && IsAsciiDigit(source_[pos_ + 1]))) {
    return LexNumber();
  }
  if (c == '"' || c == '\'') return LexString(0, false, false);
  if (c == '`') return LexQuotedIdent();
  if (IsIdentStart(c)) {
    // String prefixes: r, b, and both in either order and case.
    size_t prefix = 0;
    bool raw = false, bytes = false;
    while (prefix < 2 && pos_ + prefix < source_.size()) {
      const char p = source_[pos_ + prefix];
      if ((p == 'r' || p == 'R') && !raw) {
        raw = true;
      } else if ((p == 'b' || p == 'B') && !bytes) {
        bytes = true;
      } else {
        break;
      }
      ++prefix;
    }
    if (prefix > 0 && pos_ + prefix < source_.size() &&
        (source_[pos_ + prefix] == '"' || source_[pos_ + prefix] == '\'')) {
      return LexString(prefix, raw, bytes);
    }
    size_t end = pos_;
    while (end < source_.size() && IsIdentPart(source_[end])) ++end;
    token.kind = Token::Kind::kIdent;
    token.text = source_.substr(pos_, end - pos_);
    pos_ = end;
    return token;
  }
  static constexpr std::string_view kTwoCharPuncts[] = {"==", "!=", "<=", ">=", "&&", "||"};
  for (const std::string_view punct : kTwoCharPuncts) {
    if (source_.substr(pos_, 2) == punct) {
      token.kind = Token::Kind::kPunct;
      token.text = source_.substr(pos_, 2);
      pos_ += 2;
      return token;
    }
  }
  static constexpr std::string_view kOneCharPuncts = "<>!+-*/%?:.,()[]{}";
  if (kOneCharPuncts.find(c) != std::string_view::npos) {
    token.kind = Token::Kind::kPunct;
    token.text = source_.substr(pos_, 1);
    ++pos_;
    return token;
  }
  const size_t start = pos_;
  ++pos_;
  if (c == '=') return MakeError(start, "unexpected '='; did you mean '=='?");
  if (c == '&') return MakeError(start, "unexpected '&'; did you mean '&&'?");
  if (c == '|') return MakeError(start, "unexpected '|'; did you mean '||'?");
  return MakeError(start, "unexpected character " + DescribeChar(c));
}

Token Lexer::LexNumber() {
  Token token;
  const size_t start = pos_;
  token.offset = static_cast<int>(start);
  const bool hex = source_.substr(pos_, 2) == "0x" || source_.substr(pos_, 2) == "0X";
  if (hex) {
    pos_ += 2;
    const size_t digits_start = pos_;
    while (pos_ < source_.size() && IsHexDigit(source_[pos_])) {
      if (token.int_value > (UINT64_MAX >> 4)) token.int_overflow = true;
      token.int_value = (token.int_value << 4) | HexValue(source_[pos_]);
      ++pos_;
    }
    if (pos_ == digits_start) return MakeError(start, "expected hexadecimal digits after '0x'");
  } else {
    bool is_double = false;
    while (pos_ < source_.size() && IsAsciiDigit(source_[pos_])) ++pos_;
    if (pos_ + 1 < source_.size() && source_[pos_] == '.' && IsAsciiDigit(source_[pos_ + 1])) {
      is_double = true;
      ++pos_;
      while (pos_ < source_.size() && IsAsciiDigit(source_[pos_])) ++pos_;
    }
    if (pos_ < source_.size() && (source_[pos_] == 'e' || source_[pos_] == 'E')) {
      size_t exponent = pos_ + 1;
      if (exponent < source_.size() && (source_[exponent] == '+' || source_[exponent] == '-')) ++exponent;
      if (exponent < source_.size() && IsAsciiDigit(source_[exponent])) {
        is_double = true;
        pos_ = exponent;
        while (pos_ < source_.size() && IsAsciiDigit(source_[pos_])) ++pos_;
      }
    }
    if (is_double) {
      token.kind = Token::Kind::kDouble;
      token.text = source_.substr(start, pos_ - start);
      const auto result =
          std::from_chars(token.text.data(), token.text.data() + token.text.size(), token.double_value);
      if (result.ec == std::errc::result_out_of_range && Underflows(token.text)) {
        token.double_value = 0;  // as strtod and CEL round it
      } else if (result.ec != std::errc()) {
        return MakeError(start, "double literal out of range: " + std::string(token.text));
      }
      if (pos_ < source_.size() && IsIdentPart(source_[pos_])) {
        ++pos_;
        return MakeError(start, "invalid number '" + std::string(source_.substr(start, pos_ - start)) + "'");
      }
      return token;
    }
    for (size_t i = start; i < pos_; ++i) {
      const uint64_t digit = source_[i] - '0';
      if (token.int_value > (UINT64_MAX - digit) / 10) token.int_overflow = true;
      token.int_value = token.int_value * 10 + digit;
    }
  }
  token.kind = Token::Kind::kInt;
  if (pos_ < source_.size() && (source_[pos_] == 'u' || source_[pos_] == 'U')) {
    token.kind = Token::Kind::kUint;
    ++pos_;
  }
  if (pos_ < source_.size() && IsIdentPart(source_[pos_])) {
    ++pos_;
    return MakeError(start, "invalid number '" + std::string(source_.substr(start, pos_ - start)) + "'");
  }
  token.text = source_.substr(start, pos_ - start);
  return token;
}

// CEL's ESC_IDENTIFIER: letters, digits and _ . - / and space between backquotes.
Token Lexer::LexQuotedIdent() {
  const size_t start = pos_++;
  size_t end = pos_;
  while (end < source_.size() && source_[end] != '`') {
    const char c = source_[end];
    if (!IsIdentPart(c) && c != '.' && c != '-' && c != '/' && c != ' ') {
      pos_ = end + 1;
      return MakeError(end, "unexpected character " + DescribeChar(c) +
                                " in a quoted field name (letters, digits, and _ . - / or space)");
    }
    ++end;
  }
  if (end >= source_.size()) return MakeError(start, "unterminated quoted field name (expected '`')");
  if (end == pos_) return MakeError(start, "empty quoted field name");
  Token token;
  token.kind = Token::Kind::kQuotedIdent;
  token.offset = static_cast<int>(start);
  token.string_value = std::string(source_.substr(pos_, end - pos_));
  pos_ = end + 1;
  token.text = source_.substr(start, pos_ - start);
  return token;
}

Token Lexer::LexString(size_t prefix_length, bool raw, bool bytes) {
  Token token;
  const size_t start = pos_;
  token.offset = static_cast<int>(start);
  pos_ += prefix_length;
  const char quote = source_[pos_];
  const bool triple = source_.substr(pos_, 3) == std::string(3, quote);
  pos_ += triple ? 3 : 1;
  std::string value;
  while (true) {
    if (pos_ >= source_.size()) return MakeError(start, "unterminated string literal");
    const char c = source_[pos_];
    if (triple ? source_.substr(pos_, 3) == std::string(3, quote) : c == quote) break;
    if (!triple && (c == '\n' || c == '\r')) {
      return MakeError(start, "unterminated string literal (use a triple-quoted string for several lines)");
    }
    if (c != '\\' || raw) {
      value += c;
      ++pos_;
      continue;
    }
    const size_t escape = pos_;
    if (pos_ + 1 >= source_.size()) return MakeError(start, "unterminated string literal");
    const char e = source_[pos_ + 1];
    pos_ += 2;
    switch (e) {
      case 'a':
        value += '\a';
        continue;
      case 'b':
        value += '\b';
        continue;
      case 'f':
        value += '\f';
        continue;
      case 'n':
        value += '\n';
        continue;
      case 'r':
        value += '\r';
        continue;
      case 't':
        value += '\t';
        continue;
      case 'v':
        value += '\v';
        continue;
      case '\\':
      case '?':
      case '"':
      case '\'':
      case '`':
        value += e;
        continue;
      default:
        break;
    }
    int digits = 0, base = 16;
    if (e == 'x' || e == 'X') {
      digits = 2;
    } else if (e == 'u') {
      digits = 4;
    } else if (e == 'U') {
      digits = 8;
    } else if (e >= '0' && e <= '3') {
      digits = 3;  // \ooo: the first digit is `e`
      base = 8;
      --pos_;
    } else {
      pos_ = escape;
      return MakeError(escape, "invalid escape sequence '\\" + std::string(1, e) + "'");
    }
    uint32_t code_point = 0;
    for (int i = 0; i < digits; ++i, ++pos_) {
      const char d = pos_ < source_.size() ? source_[pos_] : '\0';
      const bool valid = base == 16 ? IsHexDigit(d) : (d >= '0' && d <= '7');
      if (!valid)
        return MakeError(escape, "invalid escape sequence: expected " + std::to_string(digits) +
                                     (base == 16 ? " hexadecimal" : " octal") + " digits");
      code_point = code_point * base + HexValue(d);
    }
    if (code_point > 0x10FFFF || (code_point >= 0xD800 && code_point <= 0xDFFF)) {
      return MakeError(escape, "invalid escape sequence: not a Unicode code point");
    }
    AppendUtf8(code_point, value);
  }
  pos_ += triple ? 3 : 1;
  token.kind = bytes ? Token::Kind::kBytes : Token::Kind::kString;
  token.text = source_.substr(start, pos_ - start);
  token.string_value = std::move(value);
  return token;
}

}  // namespace ruleplane::expr
