// Standard base64 (RFC 4648, with padding): how etcd's JSON gateway and Go's
// encoding/json carry bytes.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ruleplane {

std::string Base64Encode(std::string_view bytes);
// Nullopt when `text` is not valid base64.
std::optional<std::string> Base64Decode(std::string_view text);
// Decodes onto the end of `out` (no copy of the result); false, with `out`
// as it was, when `text` is not valid base64.
bool Base64DecodeAppend(std::string_view text, std::string& out);

}  // namespace ruleplane
