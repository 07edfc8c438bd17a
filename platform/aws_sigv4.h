// AWS Signature Version 4 for S3 requests (and S3-compatible stores: MinIO,
// Dell ECS, OpenShift OCS), computed without I/O: the request is described
// as data and the answer is the Authorization header with every header to
// send beside it.
//
// S3's rules, which differ from the other AWS services: the path is encoded
// once (RFC 3986 unreserved characters kept, '/' kept; never encoded twice),
// query names and values are encoded with '/' encoded too and sorted, and the
// payload hash is sent as x-amz-content-sha256 (the hex SHA-256 of the body,
// or UNSIGNED-PAYLOAD). host, x-amz-date, x-amz-content-sha256 and, with a
// session token, x-amz-security-token are always signed; so is every header
// the request names (Range, x-amz-server-side-encryption*, Content-MD5).
//
//   SigV4Request request{.method = "GET", .host = "examplebucket.s3.amazonaws.com",
//                        .path = "/test.txt", .headers = {{"Range", "bytes=0-9"}},
//                        .payload_hash = std::string(kEmptyPayloadSha256)};
//   SigV4Signature signed_request = SignSigV4(request, credentials, "us-east-1", now);
//   for (const std::string& header : signed_request.headers) ...  // "Authorization: AWS4-HMAC-SHA256 ..."
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/common/sha256.h"  // Sha256Hex, for payload hashes

namespace ruleplane {

// The payload hash of a request whose body is not hashed (over TLS only).
inline constexpr std::string_view kUnsignedPayload = "UNSIGNED-PAYLOAD";
// The SHA-256 of no bytes: the payload hash of GET, HEAD and DELETE.
inline constexpr std::string_view kEmptyPayloadSha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

struct AwsCredentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // "" = none; else sent and signed as x-amz-security-token
};

struct SigV4Request {
  std::string method;  // "GET", "PUT", ...
  // The Host header exactly as sent: "bucket.s3.eu-west-1.amazonaws.com",
  // "127.0.0.1:9000" (with the port unless it is the scheme's default).
  std::string host;
  // The path, not encoded: "/bucket/etcd-main/v2/Full-0-1-2.gz"; encoded here.
  std::string path;
  // Query parameters, not encoded, in any order ("uploads" has value "").
  std::vector<std::pair<std::string, std::string>> query;
  // Headers to send and sign besides the ones always signed.
  std::vector<std::pair<std::string, std::string>> headers;
  // Hex SHA-256 of the body, or kUnsignedPayload.
  std::string payload_hash;
};

struct SigV4Signature {
  std::string canonical_request;
  std::string string_to_sign;
  std::string signed_headers;  // "host;range;x-amz-content-sha256;x-amz-date"
  std::string signature;       // 64 hex digits
  std::string authorization;   // the Authorization header's value
  // Every header to send, "Name: value": Host, the request's own,
  // x-amz-content-sha256, x-amz-date, x-amz-security-token (with a token)
  // and Authorization.
  std::vector<std::string> headers;
  // The encoded path and query to put in the URL: "/test%24file.text",
  // "max-keys=2&prefix=J" (what was signed).
  std::string encoded_path;
  std::string encoded_query;
};

// The signature of `request` at time `when` for `region` and `service`.
SigV4Signature SignSigV4(const SigV4Request& request, const AwsCredentials& credentials,
                         std::string_view region, std::chrono::system_clock::time_point when,
                         std::string_view service = "s3");

// S3's UriEncode: every byte but A-Z a-z 0-9 - _ . ~ as %XX (upper-case
// hex), '/' kept when `keep_slash`.
std::string AwsUriEncode(std::string_view text, bool keep_slash);

// The query parameters encoded (AwsUriEncode, '/' encoded), sorted by name
// then value, joined with '&'; a parameter without value as "name=".
std::string CanonicalQueryString(const std::vector<std::pair<std::string, std::string>>& query);

// "20130524T000000Z" (UTC).
std::string AmzDate(std::chrono::system_clock::time_point when);

// The raw HMAC-SHA256 of `data` with `key`.
std::string HmacSha256(std::string_view key, std::string_view data);

}  // namespace ruleplane
