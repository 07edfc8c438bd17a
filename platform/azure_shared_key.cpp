#include "platform/azure_shared_key.h"

#include <time.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>

#include "engine/common/ascii.h"
#include "platform/aws_sigv4.h"  // HmacSha256
#include "platform/base64.h"

namespace ruleplane {
namespace {

std::string Trimmed(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return "";
  const size_t end = text.find_last_not_of(" \t");
  return std::string(text.substr(begin, end - begin + 1));
}

// The value of a standard header, "" when the request has none.
std::string Standard(const SharedKeyRequest& request, std::string_view name) {
  for (const auto& [header, value] : request.headers)
    if (AsciiLower(header) == name) return Trimmed(value);
  return "";
}

}  // namespace

SharedKeySignature SignSharedKey(const SharedKeyRequest& request, std::string_view key) {
  std::string text = request.method + "\n";
  text += Standard(request, "content-encoding") + "\n";
  text += Standard(request, "content-language") + "\n";
  text += (request.content_length == 0 ? std::string() : std::to_string(request.content_length)) + "\n";
  for (const char* name : {"content-md5", "content-type", "date", "if-modified-since", "if-match",
                           "if-none-match", "if-unmodified-since", "range"})
    text += Standard(request, name) + "\n";

  // x-ms-* headers: lower-cased, sorted by name; a name given twice has its
  // values joined with ','.
  std::map<std::string, std::string> ms_headers;
  for (const auto& [header, value] : request.headers) {
    std::string name = AsciiLower(Trimmed(header));
    if (!name.starts_with("x-ms-")) continue;
    auto [at, inserted] = ms_headers.emplace(name, Trimmed(value));
    if (!inserted) at->second += "," + Trimmed(value);
  }
  for (const auto& [name, value] : ms_headers) text += name + ":" + value + "\n";

  // The resource: the account, the path as sent, then the query parameters
  // by lower-cased name, several values of one name sorted and joined with ','.
  text += "/" + request.account + (request.path.empty() ? "/" : request.path);
  std::map<std::string, std::vector<std::string>> parameters;
  for (const auto& [name, value] : request.query) parameters[AsciiLower(name)].push_back(value);
  for (auto& [name, values] : parameters) {
    std::sort(values.begin(), values.end());
    std::string joined;
    for (const std::string& value : values) joined += (joined.empty() ? "" : ",") + value;
    text += "\n" + name + ":" + joined;
  }

  SharedKeySignature signature;
  signature.authorization = "SharedKey " + request.account + ":" + Base64Encode(HmacSha256(key, text));
  signature.string_to_sign = std::move(text);
  return signature;
}

std::string AzureUriEncode(std::string_view text, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
}

std::string AzureQueryString(const std::vector<std::pair<std::string, std::string>>& query) {
  std::string out;
  for (const auto& [name, value] : query) {
    if (!out.empty()) out += '&';
    out += AzureUriEncode(name, false) + "=" + AzureUriEncode(value, false);
  }
  return out;
}

std::string HttpDate(std::chrono::system_clock::time_point when) {
  // Spelled out rather than strftime's %a and %b, which follow the locale.
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const time_t seconds = std::chrono::system_clock::to_time_t(when);
  struct tm utc {};
  gmtime_r(&seconds, &utc);
  char text[64];
  snprintf(text, sizeof text, "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[utc.tm_wday], utc.tm_mday,
           kMonths[utc.tm_mon], utc.tm_year + 1900, utc.tm_hour, utc.tm_min, utc.tm_sec);
  return text;
}

}  // namespace ruleplane
