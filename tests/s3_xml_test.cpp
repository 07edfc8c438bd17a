// The small XML reader of the S3 client, on the shapes S3 answers with.
#include "adapters/object_store/s3_xml.h"

#include <gtest/gtest.h>

namespace ruleplane {
namespace {

TEST(S3Xml, ReadsAListingPage) {
  const std::string page =
      R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>backups</Name><KeyCount>2</KeyCount>
<IsTruncated>true</IsTruncated><NextContinuationToken>1/AbC+==</NextContinuationToken>
<Contents><Key>etcd-main/v2/a&amp;b&lt;c&gt;&#233;&#x1F600;</Key><Size>10</Size><ETag>&quot;abc&quot;</ETag></Contents>
<Contents><Key>etcd-main/v2/empty</Key><Size>0</Size><StorageClass/></Contents></ListBucketResult>)";
  const auto contents = XmlElements(page, "Contents");
  ASSERT_EQ(contents.size(), 2u);
  EXPECT_EQ(XmlText(contents[0], "Key"), "etcd-main/v2/a&b<c>\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(XmlText(contents[0], "ETag"), "\"abc\"");
  EXPECT_EQ(XmlText(contents[1], "StorageClass"), "");
  EXPECT_EQ(XmlText(page, "Key"), "etcd-main/v2/a&b<c>\xc3\xa9\xf0\x9f\x98\x80");  // not <KeyCount>
  EXPECT_EQ(XmlText(page, "KeyCount"), "2");
  EXPECT_EQ(XmlText(page, "NextContinuationToken"), "1/AbC+==");
  EXPECT_FALSE(XmlText(page, "Missing").has_value());
}

TEST(S3Xml, RefusesBadEntitiesAndToleratesBrokenDocuments) {
  EXPECT_FALSE(XmlUnescape("a&bogus;b").has_value());
  EXPECT_FALSE(XmlUnescape("a&amp").has_value());
  EXPECT_FALSE(XmlUnescape("&#0;").has_value());
  EXPECT_FALSE(XmlUnescape("&#xD800;").has_value());
  EXPECT_FALSE(XmlUnescape("&#x110000;").has_value());
  EXPECT_TRUE(XmlElements("<Key>never closed", "Key").empty());
  EXPECT_TRUE(XmlElements("<Key", "Key").empty());
  EXPECT_EQ(XmlEscape("<a&'\">"), "&lt;a&amp;&apos;&quot;&gt;");
  EXPECT_EQ(XmlUnescape(XmlEscape("<a&'\">")), "<a&'\">");
}

TEST(S3Xml, DecodesS3sUrlEncodingOfKeys) {
  EXPECT_EQ(S3UrlDecode("with+space%2Bplus%2Fslash"), "with space+plus/slash");
  EXPECT_EQ(S3UrlDecode("%C3%A9"), "\xc3\xa9");
  EXPECT_FALSE(S3UrlDecode("bad%2").has_value());
  EXPECT_FALSE(S3UrlDecode("bad%zz").has_value());
}

}  // namespace
}  // namespace ruleplane
