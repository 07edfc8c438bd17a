#include "engine/common/sha256.h"

#include <openssl/evp.h>

#include <array>

namespace ruleplane {

std::string Sha256Digest(std::string_view data) {
  // EVP_Digest uses the CPU's SHA extensions where there are some.
  std::array<unsigned char, 32> digest{};
  unsigned int size = 0;
  EVP_Digest(data.data(), data.size(), digest.data(), &size, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<const char*>(digest.data()), digest.size());
}

std::string Sha256Hex(std::string_view data) {
  static constexpr char kHex[] = "0123456789abcdef";
  const std::string digest = Sha256Digest(data);
  std::string hex;
  hex.reserve(2 * digest.size());
  for (const unsigned char byte : digest) {
    hex.push_back(kHex[byte >> 4]);
    hex.push_back(kHex[byte & 0xf]);
  }
  return hex;
}

}  // namespace ruleplane
