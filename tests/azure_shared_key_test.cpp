// Azure Shared Key signatures against vectors from outside ruleplane.
//
// Where the vectors come from: (1) Microsoft's "Authorize with Shared Key"
// page gives the string to sign of a Get Container Metadata request
// (x-ms-version 2015-02-21) but no key; (2) the test of the blob
// SharedKey signer in Microsoft's old azure-sdk-for-node (testSignRequest)
// gives a whole Authorization header for the storage emulator's account;
// (3) a Put Block as the Blob client sends it, the string to sign written
// out by hand from the rules. The signatures of (1) and (3) were computed
// with Python's hmac and base64 modules over those strings (the Python
// azure-storage-blob SDK is not installable from Debian without the whole
// 540 MB python3-azure). Beyond these, every request of the object-store
// tests (tests/objectstore/azure_blob_test.cpp) is verified by azurite,
// whose BlobSharedKeyAuthenticator recomputes the signature of every
// request to a private container and answers 403 AuthorizationFailure when
// it differs.
#include "platform/azure_shared_key.h"

#include <gtest/gtest.h>

#include "platform/base64.h"

namespace ruleplane {
namespace {

// The storage emulator's well-known account key (Azurite, the old emulator).
const std::string kDevKey =
    *Base64Decode("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==");

TEST(AzureSharedKey, TheDocumentedStringToSignOfGetContainerMetadata) {
  SharedKeyRequest request;
  request.method = "GET";
  request.account = "myaccount";
  request.path = "/mycontainer";
  request.query = {{"restype", "container"}, {"comp", "metadata"}, {"timeout", "20"}};
  request.headers = {{"x-ms-version", "2015-02-21"}, {"x-ms-date", "Fri, 26 Jun 2015 23:39:12 GMT"}};
  const SharedKeySignature signature = SignSharedKey(request, kDevKey);
  EXPECT_EQ(signature.string_to_sign,
            "GET\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:Fri, 26 Jun 2015 23:39:12 GMT\nx-ms-version:2015-02-21\n"
            "/myaccount/mycontainer\ncomp:metadata\nrestype:container\ntimeout:20");
  EXPECT_EQ(signature.authorization, "SharedKey myaccount:1u9lui2jDxj0+fpbHjQ5m5NnastJRSYM+PSmfi8TXx4=");
}

TEST(AzureSharedKey, TheNodeSdksSignatureForTheEmulatorAccount) {
  // That SDK joined the account and a path without its leading '/'
  // ("/devstoreaccount1container"): given so here, the vector checks the
  // layout, the header order and the HMAC over the decoded key. An empty
  // Content-Type signs as an empty line.
  SharedKeyRequest request;
  request.method = "GET";
  request.account = "devstoreaccount1";
  request.path = "container";
  request.query = {{"restype", "container"}};
  request.headers = {
      {"Content-Type", ""}, {"x-ms-version", "2011-08-18"}, {"x-ms-date", "Fri, 23 Sep 2011 01:37:34 GMT"}};
  EXPECT_EQ(SignSharedKey(request, kDevKey).authorization,
            "SharedKey devstoreaccount1:Y5R86+6XE5MH602SIyjeTwlJuQjbawv20PT4kb/F/04=");
}

TEST(AzureSharedKey, APutBlockOnAPathStyleEmulatorUrl) {
  SharedKeyRequest request;
  request.method = "PUT";
  request.account = "devstoreaccount1";
  request.path = "/devstoreaccount1/backups/etcd-main/v2/Full-00000000-00001000-1700000000";
  // Query values are signed decoded ('=' and '+' as they are), names sorted.
  request.query = {{"comp", "block"}, {"blockid", "MDAwMDAwMDAwMQ=="}};
  request.headers = {{"X-Ms-Date", HttpDate(std::chrono::system_clock::from_time_t(1700000000))},
                     {"Content-MD5", "kHuXVZ0l9EZfEMuFx3l9ag=="},
                     {"x-ms-version", " 2021-08-06 "},
                     {"User-Agent", "not signed"}};
  request.content_length = 4 << 20;
  const SharedKeySignature signature = SignSharedKey(request, kDevKey);
  EXPECT_EQ(signature.string_to_sign,
            "PUT\n\n\n4194304\nkHuXVZ0l9EZfEMuFx3l9ag==\n\n\n\n\n\n\n\n"
            "x-ms-date:Tue, 14 Nov 2023 22:13:20 GMT\nx-ms-version:2021-08-06\n"
            "/devstoreaccount1/devstoreaccount1/backups/etcd-main/v2/Full-00000000-00001000-1700000000\n"
            "blockid:MDAwMDAwMDAwMQ==\ncomp:block");
  EXPECT_EQ(signature.authorization,
            "SharedKey devstoreaccount1:7HO8uk5C+dQ8TwtRBW/VYXjmYrieNAqjj3CcldWtzdY=");
}

TEST(AzureSharedKey, AZeroContentLengthSignsAsAnEmptyLineAndRepeatedParametersJoinSorted) {
  SharedKeyRequest request;
  request.method = "DELETE";
  request.account = "a";
  request.path = "/c/b";
  request.query = {{"Include", "tags"}, {"include", "metadata"}};
  request.headers = {{"Range", "bytes=0-9"}, {"x-ms-meta-x", "1"}, {"x-ms-meta-x", "2"}};
  EXPECT_EQ(SignSharedKey(request, "k").string_to_sign,
            "DELETE\n\n\n\n\n\n\n\n\n\n\nbytes=0-9\nx-ms-meta-x:1,2\n/a/c/b\ninclude:metadata,tags");
}

TEST(AzureSharedKey, UrlPiecesAndDates) {
  EXPECT_EQ(AzureUriEncode("etcd-main/v2/Full 1+~", true), "etcd-main/v2/Full%201%2B~");
  EXPECT_EQ(AzureQueryString({{"blockid", "MDA+/w=="}, {"comp", "block"}}),
            "blockid=MDA%2B%2Fw%3D%3D&comp=block");
  EXPECT_EQ(HttpDate(std::chrono::system_clock::from_time_t(1435361952)), "Fri, 26 Jun 2015 23:39:12 GMT");
  EXPECT_EQ(HttpDate(std::chrono::system_clock::from_time_t(0)), "Thu, 01 Jan 1970 00:00:00 GMT");
}

}  // namespace
}  // namespace ruleplane
