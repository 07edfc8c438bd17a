// Azure Storage's Shared Key authorization for the Blob service ("Authorize
// with Shared Key", versions 2015-02-21 and later), computed without I/O:
// the request is described as data and the answer is the string that was
// signed and the Authorization header.
//
// The string to sign is the verb, eleven standard headers by position
// (Content-Encoding, Content-Language, Content-Length — empty when 0 —,
// Content-MD5, Content-Type, Date, If-Modified-Since, If-Match,
// If-None-Match, If-Unmodified-Since, Range), the x-ms-* headers
// lower-cased and sorted ("name:value\n" each), and the canonicalized
// resource: "/<account><URL path as sent>" (so path-style emulator URLs,
// "/devstoreaccount1/backups/...", name the account twice), then each query
// parameter, lower-cased, sorted, not encoded, as "\nname:value". The
// signature is the base64 HMAC-SHA256 of that string with the base64-decoded
// account key.
//
//   SharedKeyRequest request{.method = "GET", .account = "myaccount", .path = "/mycontainer",
//                            .query = {{"restype", "container"}, {"comp", "list"}},
//                            .headers = {{"x-ms-date", HttpDate(now)}, {"x-ms-version", "2021-08-06"}}};
//   SharedKeySignature signature = SignSharedKey(request, decoded_key);
//   ... "Authorization: " + signature.authorization
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ruleplane {

struct SharedKeyRequest {
  std::string method;   // "GET", "PUT", "DELETE"
  std::string account;  // the storage account's name
  // The URL's path exactly as sent (percent-encoded): "/backups/etcd-main/v2/Full-...",
  // or "/devstoreaccount1/backups/..." for an emulator addressed path-style.
  std::string path;
  // Query parameters, not encoded, in any order.
  std::vector<std::pair<std::string, std::string>> query;
  // Every header sent but Host, Content-Length and Authorization: the
  // standard ones (signed by position when present) and the x-ms-* ones
  // (x-ms-date and x-ms-version among them). Names in any case.
  std::vector<std::pair<std::string, std::string>> headers;
  // The body's size, which the transport sends as Content-Length.
  int64_t content_length = 0;
};

struct SharedKeySignature {
  std::string string_to_sign;
  std::string authorization;  // "SharedKey <account>:<base64 HMAC-SHA256>"
};

// `key` is the account key decoded from its base64 form.
SharedKeySignature SignSharedKey(const SharedKeyRequest& request, std::string_view key);

// RFC 3986 percent-encoding: every byte but A-Z a-z 0-9 - _ . ~ as %XX
// (upper-case hex), '/' kept when `keep_slash`.
std::string AzureUriEncode(std::string_view text, bool keep_slash);

// The query for a URL: each name and value encoded ('/' too), joined with
// '&', in the order given.
std::string AzureQueryString(const std::vector<std::pair<std::string, std::string>>& query);

// An HTTP date (RFC 1123, always GMT), as x-ms-date takes it: "Fri, 26 Jun 2015 23:39:12 GMT".
std::string HttpDate(std::chrono::system_clock::time_point when);

}  // namespace ruleplane
