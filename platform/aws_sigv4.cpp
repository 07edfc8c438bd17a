#include "platform/aws_sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <map>

#include "engine/common/ascii.h"

namespace ruleplane {
namespace {

std::string Hex(const unsigned char* bytes, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(size * 2);
  for (size_t i = 0; i < size; ++i) {
    hex += kDigits[bytes[i] >> 4];
    hex += kDigits[bytes[i] & 0xf];
  }
  return hex;
}

// A header value as signed: leading and trailing blanks removed, runs of
// blanks inside reduced to one space.
std::string TrimmedValue(std::string_view value) {
  std::string out;
  bool blank = false;
  for (char c : value) {
    if (c == ' ' || c == '\t') {
      blank = !out.empty();
      continue;
    }
    if (blank) out += ' ';
    blank = false;
    out += c;
  }
  return out;
}

}  // namespace

std::string AwsUriEncode(std::string_view text, bool keep_slash) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) || c == '-' || c == '_' || c == '.' || c == '~' || (c == '/' && keep_slash)) {
      out += c;
    } else {
      out += '%';
      out += kDigits[byte >> 4];
      out += kDigits[byte & 0xf];
    }
  }
  return out;
}

std::string CanonicalQueryString(const std::vector<std::pair<std::string, std::string>>& query) {
  std::vector<std::pair<std::string, std::string>> encoded;
  encoded.reserve(query.size());
  for (const auto& [name, value] : query)
    encoded.emplace_back(AwsUriEncode(name, false), AwsUriEncode(value, false));
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [name, value] : encoded) {
    if (!out.empty()) out += '&';
    out += name + "=" + value;
  }
  return out;
}

std::string AmzDate(std::chrono::system_clock::time_point when) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(when);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%dT%H%M%SZ", &utc);
  return text;
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest, &size);
  return std::string(reinterpret_cast<const char*>(digest), size);
}

SigV4Signature SignSigV4(const SigV4Request& request, const AwsCredentials& credentials,
                         std::string_view region, std::chrono::system_clock::time_point when,
                         std::string_view service) {
  SigV4Signature out;
  const std::string amz_date = AmzDate(when);
  const std::string date = amz_date.substr(0, 8);

  // AsciiLower-cased names, sorted; a name given twice has its values joined by ','.
  std::map<std::string, std::string> canonical;
  std::vector<std::pair<std::string, std::string>> sent;
  auto add = [&](std::string_view name, std::string_view value) {
    const std::string key = AsciiLower(name);
    const std::string trimmed = TrimmedValue(value);
    auto [at, inserted] = canonical.emplace(key, trimmed);
    if (!inserted) at->second += "," + trimmed;
    sent.emplace_back(std::string(name), std::string(value));
  };
  add("Host", request.host);
  for (const auto& [name, value] : request.headers) {
    const std::string key = AsciiLower(name);
    if (key == "host" || key == "x-amz-date" || key == "x-amz-content-sha256" ||
        key == "x-amz-security-token" || key == "authorization")
      continue;  // set below from the request's fields
    add(name, value);
  }
  add("x-amz-content-sha256", request.payload_hash);
  add("x-amz-date", amz_date);
  if (!credentials.session_token.empty()) add("x-amz-security-token", credentials.session_token);

  std::string canonical_headers;
  for (const auto& [name, value] : canonical) {
    canonical_headers += name + ":" + value + "\n";
    if (!out.signed_headers.empty()) out.signed_headers += ';';
    out.signed_headers += name;
  }
  out.encoded_path = AwsUriEncode(request.path.empty() ? "/" : request.path, true);
  out.encoded_query = CanonicalQueryString(request.query);
  out.canonical_request = request.method + "\n" + out.encoded_path + "\n" + out.encoded_query + "\n" +
                          canonical_headers + "\n" + out.signed_headers + "\n" + request.payload_hash;

  const std::string scope = date + "/" + std::string(region) + "/" + std::string(service) + "/aws4_request";
  out.string_to_sign =
      "AWS4-HMAC-SHA256\n" + amz_date + "\n" + scope + "\n" + Sha256Hex(out.canonical_request);
  std::string key = HmacSha256("AWS4" + credentials.secret_access_key, date);
  key = HmacSha256(key, region);
  key = HmacSha256(key, service);
  key = HmacSha256(key, "aws4_request");
  const std::string signature = HmacSha256(key, out.string_to_sign);
  out.signature = Hex(reinterpret_cast<const unsigned char*>(signature.data()), signature.size());
  out.authorization = "AWS4-HMAC-SHA256 Credential=" + credentials.access_key_id + "/" + scope +
                      ",SignedHeaders=" + out.signed_headers + ",Signature=" + out.signature;

  for (const auto& [name, value] : sent) out.headers.push_back(name + ": " + value);
  out.headers.push_back("Authorization: " + out.authorization);
  return out;
}

}  // namespace ruleplane
