#include "platform/base64.h"

#include <array>
#include <cstdint>

namespace ruleplane {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The sextet of each base64 character; -1 for anything else.
constexpr std::array<int8_t, 256> kSextets = [] {
  std::array<int8_t, 256> table{};
  table.fill(-1);
  for (int i = 0; i < 64; ++i) table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int8_t>(i);
  return table;
}();

}  // namespace

std::string Base64Encode(std::string_view bytes) {
  std::string text;
  text.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t group = static_cast<uint8_t>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) group |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) group |= static_cast<uint8_t>(bytes[i + 2]);
    text.push_back(kAlphabet[(group >> 18) & 63]);
    text.push_back(kAlphabet[(group >> 12) & 63]);
    text.push_back(i + 1 < bytes.size() ? kAlphabet[(group >> 6) & 63] : '=');
    text.push_back(i + 2 < bytes.size() ? kAlphabet[group & 63] : '=');
  }
  return text;
}

bool Base64DecodeAppend(std::string_view text, std::string& out) {
  if (text.size() % 4 != 0) return false;
  const size_t padding =
      text.empty() ? 0 : (text.back() == '=') + (text.size() > 1 && text[text.size() - 2] == '=');
  const size_t start = out.size();
  out.resize(start + text.size() / 4 * 3 - padding);
  char* write = out.data() + start;
  const auto* read = reinterpret_cast<const unsigned char*>(text.data());
  const size_t groups = text.size() / 4;
  for (size_t g = 0; g < groups; ++g, read += 4) {
    const bool last = g + 1 == groups;
    const int8_t a = kSextets[read[0]], b = kSextets[read[1]];
    const int8_t c = last && padding >= 2 ? 0 : kSextets[read[2]];
    const int8_t d = last && padding >= 1 ? 0 : kSextets[read[3]];
    if ((a | b | c | d) < 0) {
      out.resize(start);
      return false;
    }
    const uint32_t group = uint32_t(a) << 18 | uint32_t(b) << 12 | uint32_t(c) << 6 | uint32_t(d);
    *write++ = static_cast<char>(group >> 16);
    if (!last || padding < 2) *write++ = static_cast<char>(group >> 8 & 0xff);
    if (!last || padding < 1) *write++ = static_cast<char>(group & 0xff);
  }
  return true;
}

std::optional<std::string> Base64Decode(std::string_view text) {
  std::string bytes;
  if (!Base64DecodeAppend(text, bytes)) return std::nullopt;
  return bytes;
}

}  // namespace ruleplane
