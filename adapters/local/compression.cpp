#include "adapters/local/compression.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace ruleplane {
namespace {

// window_bits: 15 + 16 for gzip, 15 for zlib.
Result<std::string> Inflate(std::string_view data, int window_bits, const char* what) {
  z_stream stream{};
  if (inflateInit2(&stream, window_bits) != Z_OK) return Error{ErrorCode::kInternal, "zlib cannot start", {}};
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  std::string out;
  char buffer[1 << 16];
  int result = Z_OK;
  while (result == Z_OK) {
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof buffer;
    result = inflate(&stream, Z_NO_FLUSH);
    out.append(buffer, sizeof buffer - stream.avail_out);
    if (result == Z_BUF_ERROR && stream.avail_in == 0) break;
  }
  inflateEnd(&stream);
  if (result != Z_STREAM_END) return Error{ErrorCode::kParse, std::string("not valid ") + what + " data", {}};
  return out;
}

Result<std::string> Deflate(std::string_view data, int window_bits) {
  z_stream stream{};
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Error{ErrorCode::kInternal, "zlib cannot start", {}};
  }
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  std::string out;
  char buffer[1 << 16];
  int result = Z_OK;
  while (result == Z_OK) {
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof buffer;
    result = deflate(&stream, Z_FINISH);
    out.append(buffer, sizeof buffer - stream.avail_out);
  }
  deflateEnd(&stream);
  if (result != Z_STREAM_END) return Error{ErrorCode::kInternal, "zlib could not compress", {}};
  return out;
}

// Go's compress/lzw reader, LSB order, literal width 8 (etcd-backup-restore's
// "lzw" compression policy): codes start 9 bits wide after the 256 literals,
// clear (256) and end (257), and grow up to 12 bits. `next` is the code the
// next entry gets (Go's `hi`); the width grows as soon as `next` needs more
// bits, and a full table takes no new entries until a clear code.
Result<std::string> LzwDecode(std::string_view data) {
  constexpr int kClear = 256, kEnd = 257, kMaxWidth = 12, kNone = -1;
  std::vector<int> prefix(1 << kMaxWidth);
  std::vector<char> suffix(1 << kMaxWidth);
  std::string out, entry;
  int width = 9, next = kEnd + 1, last = kNone;
  uint32_t bits = 0;
  int count = 0;
  for (unsigned char byte : data) {
    bits |= static_cast<uint32_t>(byte) << count;
    count += 8;
    while (count >= width) {
      const int code = static_cast<int>(bits & ((1u << width) - 1));
      bits >>= width;
      count -= width;
      if (code == kEnd) return out;
      if (code == kClear) {
        width = 9;
        next = kEnd + 1;
        last = kNone;
        continue;
      }
      // A code not defined yet is valid only as the entry being defined
      // (the previous code's string and its own first byte).
      if (code > next || (code == next && last == kNone)) {
        return Error{ErrorCode::kParse, "not valid LZW data (code " + std::to_string(code) + ")", {}};
      }
      entry.clear();
      for (int c = code == next ? last : code;; c = prefix[static_cast<size_t>(c)]) {
        if (c < kClear) {
          entry.push_back(static_cast<char>(c));
          break;
        }
        entry.push_back(suffix[static_cast<size_t>(c)]);
      }
      std::reverse(entry.begin(), entry.end());
      if (code == next) entry.push_back(entry[0]);
      out += entry;
      if (last != kNone && next < (1 << kMaxWidth)) {
        prefix[static_cast<size_t>(next)] = last;
        suffix[static_cast<size_t>(next)] = entry[0];
        ++next;
      }
      last = code;
      if (next >= (1 << width) && width < kMaxWidth) ++width;
    }
  }
  return Error{ErrorCode::kParse, "LZW data ends without its end code", {}};
}

}  // namespace

std::string_view CompressionSuffix(std::string_view name) {
  if (name.size() > 6 && name.substr(name.size() - 6) == ".final") name.remove_suffix(6);
  for (std::string_view suffix : {".gz", ".zlib", ".Z"}) {
    if (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix) return suffix;
  }
  return {};
}

Result<std::string> Decompress(std::string_view data, std::string_view suffix) {
  if (suffix.empty()) return std::string(data);
  if (suffix == ".gz") return Inflate(data, 15 + 16, "gzip");
  if (suffix == ".zlib") return Inflate(data, 15, "zlib");
  if (suffix == ".Z") return LzwDecode(data);
  return Error{ErrorCode::kInvalidArgument, "unknown compression suffix '" + std::string(suffix) + "'", {}};
}

Result<std::string> Compress(std::string_view data, std::string_view suffix) {
  if (suffix.empty()) return std::string(data);
  if (suffix == ".gz") return Deflate(data, 15 + 16);
  if (suffix == ".zlib") return Deflate(data, 15);
  return Error{ErrorCode::kInvalidArgument,
               "ruleplane writes no '" + std::string(suffix) + "' snapshots: use .gz, .zlib or none",
               {}};
}

}  // namespace ruleplane
