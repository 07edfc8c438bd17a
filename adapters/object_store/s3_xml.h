// The few pieces of S3's XML answers the client reads (ListObjectsV2 pages,
// InitiateMultipartUpload, CompleteMultipartUpload, error documents), read
// without an XML library: S3 writes flat, predictable documents, and the
// client asks for elements by name. Input is bounded by the HTTP limits of
// each call; every function here is linear in it.
//
//   for (std::string_view entry : XmlElements(page, "Contents")) {
//     std::optional<std::string> key = XmlText(entry, "Key");  // unescaped
//   }
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ruleplane {

// The raw content of each <name ...>...</name> (or <name/>, empty) in
// `xml`, in order; elements of that name must not nest (S3's do not).
std::vector<std::string_view> XmlElements(std::string_view xml, std::string_view name);

// The first such element's text, unescaped; nullopt when there is none or
// its text is not valid (a bad entity).
std::optional<std::string> XmlText(std::string_view xml, std::string_view name);

// &amp; &lt; &gt; &quot; &apos; &#N; &#xH; decoded; nullopt on an unknown
// or unterminated entity, or a character reference that is not a Unicode
// scalar value.
std::optional<std::string> XmlUnescape(std::string_view text);

// The five special characters as entities, for a document the client sends.
std::string XmlEscape(std::string_view text);

// S3's URL encoding of keys in a listing asked with encoding-type=url:
// %XX, and '+' for a space. nullopt on a bad %XX.
std::optional<std::string> S3UrlDecode(std::string_view text);

}  // namespace ruleplane
