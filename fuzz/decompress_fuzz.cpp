// Fuzzes the store's decompression (adapters/local/compression.h): the first
// byte picks the compression (gzip, zlib, LZW, none), the rest is the file.
// Any input decompresses within its limits or fails cleanly; what gzip or
// zlib decompresses, compressed again, decompresses to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "adapters/local/compression.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ruleplane;
  if (size == 0) return 0;
  static constexpr std::string_view kSuffixes[] = {".gz", ".zlib", ".Z", ""};
  const std::string_view suffix = kSuffixes[data[0] % 4];
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  // Smaller than the defaults, so that each input stays fast.
  DecompressionLimits limits;
  limits.max_bytes = int64_t{8} << 20;
  limits.ratio_floor_bytes = int64_t{1} << 20;
  auto plain = Decompress(bytes, suffix, limits);
  if (!plain.ok()) return 0;
  if (static_cast<int64_t>(plain->size()) > limits.max_bytes) std::abort();
  if (suffix == ".gz" || suffix == ".zlib") {
    auto compressed = Compress(*plain, suffix);
    if (!compressed.ok()) std::abort();
    DecompressionLimits loose;
    loose.max_bytes = limits.max_bytes;
    loose.max_ratio = int64_t{1} << 40;
    auto back = Decompress(*compressed, suffix, loose);
    if (!back.ok() || *back != *plain) std::abort();
  }
  return 0;
}
