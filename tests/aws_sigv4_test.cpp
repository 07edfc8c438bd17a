// AWS Signature V4 against the vectors AWS publishes for S3 ("Signature
// Calculations for the Authorization Header: Transferring Payload in a
// Single Chunk": GET Object, PUT Object, GET Bucket Lifecycle, GET Bucket),
// and against botocore 1.43's S3SigV4Auth for requests the documentation
// does not cover (a session token, SSE-KMS headers, keys that need encoding,
// a continuation token). The botocore signatures were produced with
//   creds = Credentials(<the example keys>, 'FQoGZXIvYXdzEXAMPLETOKEN+/=')
//   req = AWSRequest(method, url, headers); req.headers['X-Amz-Content-SHA256'] = hash
//   S3SigV4Auth(creds, 's3', 'eu-west-1').add_auth(req)   # datetime fixed at 2024-01-02 03:04:05
#include "platform/aws_sigv4.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace ruleplane {
namespace {

const AwsCredentials kExample{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""};

std::chrono::system_clock::time_point At(int64_t unix_seconds) {
  return std::chrono::system_clock::time_point(std::chrono::seconds(unix_seconds));
}
const auto kMay24 = At(1369353600);  // 2013-05-24T00:00:00Z

SigV4Request ExampleBucket(std::string method, std::string path) {
  SigV4Request request;
  request.method = std::move(method);
  request.host = "examplebucket.s3.amazonaws.com";
  request.path = std::move(path);
  request.payload_hash = std::string(kEmptyPayloadSha256);
  return request;
}

TEST(AwsSigV4, TheDocumentedGetObjectWithRange) {
  SigV4Request request = ExampleBucket("GET", "/test.txt");
  request.headers = {{"Range", "bytes=0-9"}};
  const SigV4Signature got = SignSigV4(request, kExample, "us-east-1", kMay24);
  EXPECT_EQ(got.canonical_request,
            "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\n"
            "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
            "x-amz-date:20130524T000000Z\n\nhost;range;x-amz-content-sha256;x-amz-date\n"
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(got.string_to_sign,
            "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
            "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
  EXPECT_EQ(got.authorization,
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST(AwsSigV4, TheDocumentedPutObject) {
  const std::string body = "Welcome to Amazon S3.";
  EXPECT_EQ(Sha256Hex(body), "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  SigV4Request request = ExampleBucket("PUT", "/test$file.text");
  request.headers = {{"Date", "Fri, 24 May 2013 00:00:00 GMT"},
                     {"x-amz-storage-class", "REDUCED_REDUNDANCY"}};
  request.payload_hash = Sha256Hex(body);
  const SigV4Signature got = SignSigV4(request, kExample, "us-east-1", kMay24);
  EXPECT_EQ(got.encoded_path, "/test%24file.text");
  EXPECT_EQ(got.signed_headers, "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class");
  EXPECT_EQ(got.signature, "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
}

TEST(AwsSigV4, TheDocumentedGetBucketLifecycle) {
  SigV4Request request = ExampleBucket("GET", "/");
  request.query = {{"lifecycle", ""}};
  const SigV4Signature got = SignSigV4(request, kExample, "us-east-1", kMay24);
  EXPECT_EQ(got.encoded_query, "lifecycle=");
  EXPECT_EQ(got.signature, "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
}

TEST(AwsSigV4, TheDocumentedListObjectsSortsTheQuery) {
  SigV4Request request = ExampleBucket("GET", "/");
  request.query = {{"prefix", "J"}, {"max-keys", "2"}};  // out of order on purpose
  const SigV4Signature got = SignSigV4(request, kExample, "us-east-1", kMay24);
  EXPECT_EQ(got.encoded_query, "max-keys=2&prefix=J");
  EXPECT_EQ(got.signature, "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

const AwsCredentials kWithToken{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                                "FQoGZXIvYXdzEXAMPLETOKEN+/="};
const auto kJan2 = At(1704164645);  // 2024-01-02T03:04:05Z

TEST(AwsSigV4, AgreesWithBotocoreOnAPathStylePartUploadWithKmsAndAToken) {
  SigV4Request request;
  request.method = "PUT";
  request.host = "127.0.0.1:9000";
  request.path = "/backups/etcd-main/v2/Full a+b$c.gz";
  request.query = {{"uploadId", "abc/def="}, {"partNumber", "3"}};
  request.headers = {
      {"x-amz-server-side-encryption", "aws:kms"},
      {"x-amz-server-side-encryption-aws-kms-key-id", "arn:aws:kms:eu-west-1:111122223333:key/1234"}};
  request.payload_hash = std::string(kEmptyPayloadSha256);
  const SigV4Signature got = SignSigV4(request, kWithToken, "eu-west-1", kJan2);
  EXPECT_EQ(got.encoded_path, "/backups/etcd-main/v2/Full%20a%2Bb%24c.gz");
  EXPECT_EQ(got.encoded_query, "partNumber=3&uploadId=abc%2Fdef%3D");
  EXPECT_EQ(got.authorization,
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20240102/eu-west-1/s3/aws4_request,"
            "SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token;"
            "x-amz-server-side-encryption;x-amz-server-side-encryption-aws-kms-key-id,"
            "Signature=3b21c054f3ba483482f064c6ec5ad3545487558532802e28740f89653193151d");
  EXPECT_NE(
      std::find(got.headers.begin(), got.headers.end(), "x-amz-security-token: FQoGZXIvYXdzEXAMPLETOKEN+/="),
      got.headers.end());
}

TEST(AwsSigV4, AgreesWithBotocoreOnAVirtualHostedListingPage) {
  SigV4Request request;
  request.method = "GET";
  request.host = "backups.s3.eu-west-1.amazonaws.com";
  request.path = "/";
  request.query = {{"list-type", "2"},
                   {"prefix", "etcd-main/v2/"},
                   {"max-keys", "2"},
                   {"encoding-type", "url"},
                   {"continuation-token", "1/AbC+=="}};
  request.payload_hash = std::string(kEmptyPayloadSha256);
  const SigV4Signature got = SignSigV4(request, kWithToken, "eu-west-1", kJan2);
  EXPECT_EQ(got.encoded_query,
            "continuation-token=1%2FAbC%2B%3D%3D&encoding-type=url&list-type=2&max-keys=2&prefix=etcd-main%"
            "2Fv2%2F");
  EXPECT_EQ(got.signature, "1f2d3dfeae906e53324590f04b949a38695ddea2a831dcf769686fdf452b2b35");
}

TEST(AwsSigV4, EveryInputChangesTheSignature) {
  SigV4Request request = ExampleBucket("GET", "/test.txt");
  const std::string base = SignSigV4(request, kExample, "us-east-1", kMay24).signature;
  AwsCredentials other_secret = kExample;
  other_secret.secret_access_key.back() = 'X';
  EXPECT_NE(SignSigV4(request, other_secret, "us-east-1", kMay24).signature, base);
  EXPECT_NE(SignSigV4(request, kExample, "eu-west-1", kMay24).signature, base);
  EXPECT_NE(SignSigV4(request, kExample, "us-east-1", At(1369353601)).signature, base);
  SigV4Request other_key = request;
  other_key.path = "/test.txu";
  EXPECT_NE(SignSigV4(other_key, kExample, "us-east-1", kMay24).signature, base);
  SigV4Request unsigned_payload = request;
  unsigned_payload.payload_hash = std::string(kUnsignedPayload);
  EXPECT_NE(SignSigV4(unsigned_payload, kExample, "us-east-1", kMay24).signature, base);
}

TEST(AwsSigV4, HeaderValuesAreTrimmedAndNamesLowerCased) {
  SigV4Request request = ExampleBucket("GET", "/test.txt");
  request.headers = {{"RANGE", "  bytes=0-9  "}};
  EXPECT_EQ(SignSigV4(request, kExample, "us-east-1", kMay24).signature,
            "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  request.headers = {{"x-amz-meta-note", "a   b\t c"}};
  EXPECT_NE(
      SignSigV4(request, kExample, "us-east-1", kMay24).canonical_request.find("x-amz-meta-note:a b c\n"),
      std::string::npos);
}

TEST(AwsSigV4, UriEncodingFollowsS3) {
  EXPECT_EQ(AwsUriEncode("etcd-main/v2/Full-00000000-00000010-1700000000.gz", true),
            "etcd-main/v2/Full-00000000-00000010-1700000000.gz");
  EXPECT_EQ(AwsUriEncode("a b+c/d~e_f.g", true), "a%20b%2Bc/d~e_f.g");
  EXPECT_EQ(AwsUriEncode("a b+c/d", false), "a%20b%2Bc%2Fd");
  EXPECT_EQ(AwsUriEncode("\xc3\xa9%", true), "%C3%A9%25");  // é, and '%' itself: encoded once, never twice
  EXPECT_EQ(CanonicalQueryString({{"uploads", ""}}), "uploads=");
  EXPECT_EQ(CanonicalQueryString({{"b", "2"}, {"a", "x y"}, {"a", "w"}}), "a=w&a=x%20y&b=2");
  EXPECT_EQ(AmzDate(kMay24), "20130524T000000Z");
}

}  // namespace
}  // namespace ruleplane
