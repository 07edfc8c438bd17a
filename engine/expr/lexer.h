// Splits CEL source into tokens (internal to the expression engine).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ruleplane::expr {

struct Token {
  enum class Kind : uint8_t {
    kEnd,          // end of input
    kIdent,        // identifiers and the keywords true, false, null, in
    kQuotedIdent,  // `a-b`: a field name in backquotes; string_value holds it
    kInt,          // int_value holds the magnitude (int_overflow when above UINT64_MAX)
    kUint,         // 123u: recognised so that the parser can reject it clearly
    kDouble,       // double_value
    kString,       // string_value holds the decoded text
    kBytes,        // b"...": recognised so that the parser can reject it clearly
    kPunct,        // operators and punctuation; `text` says which
    kError,        // string_value holds the message
  };
  Kind kind = Kind::kEnd;
  int offset = 0;         // byte offset of the token in the source
  std::string_view text;  // the token as written
  std::string string_value;
  double double_value = 0;
  uint64_t int_value = 0;
  bool int_overflow = false;

  bool Is(std::string_view punct) const { return kind == Kind::kPunct && text == punct; }
  bool IsKeyword(std::string_view word) const { return kind == Kind::kIdent && text == word; }
};

class Lexer {
 public:
  explicit Lexer(std::string_view source) : source_(source) {}
  // The next token; after kEnd or kError, the same token again.
  Token Next();

 private:
  Token LexNumber();
  Token LexString(size_t prefix_length, bool raw, bool bytes);
  Token LexQuotedIdent();
  Token MakeError(size_t offset, std::string message);

  std::string_view source_;
  size_t pos_ = 0;
};

// "')'", "'foo'", "end of input": how an error message names a token.
std::string DescribeToken(const Token& token);

}  // namespace ruleplane::expr
