#include "adapters/local/compression.h"

#include <zlib.h>

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

// Go's compress/lzw, LSB order, literal width 8 (etcd-backup-restore's
// "lzw" compression policy): codes start 9 bits wide after the 256 literals,
// clear (256) and end (257), and grow up to 12 bits; a full table is reset
// with a clear code.
constexpr int kClear = 256, kEnd = 257, kMaxWidth = 12;

Result<std::string> LzwDecode(std::string_view data) {
  std::vector<std::string> table;
  auto reset = [&] {
    table.assign(258, std::string());
    for (int i = 0; i < 256; ++i) table[static_cast<size_t>(i)] = std::string(1, static_cast<char>(i));
  };
  reset();
  std::string out, previous;
  uint32_t bits = 0;
  int count = 0, width = 9;
  bool have_previous = false;
  for (unsigned char byte : data) {
    bits |= static_cast<uint32_t>(byte) << count;
    count += 8;
    while (count >= width) {
      const int code = static_cast<int>(bits & ((1u << width) - 1));
      bits >>= width;
      count -= width;
      if (code == kEnd) return out;
      if (code == kClear) {
        reset();
        width = 9;
        have_previous = false;
        continue;
      }
      std::string entry;
      if (code < static_cast<int>(table.size())) {
        entry = table[static_cast<size_t>(code)];
      } else if (code == static_cast<int>(table.size()) && have_previous) {
        entry = previous + previous[0];
      } else {
        return Error{ErrorCode::kParse, "not valid LZW data (code " + std::to_string(code) + ")", {}};
      }
      out += entry;
      if (have_previous && table.size() < (1u << kMaxWidth)) table.push_back(previous + entry[0]);
      previous = entry;
      have_previous = true;
      // As Go's reader: wider once the highest assigned code reaches 1 << width.
      if (table.size() > (1u << width) && width < kMaxWidth) ++width;
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
               "ruleplane writes no '" + std::string(suffix) + "' snapshots: use .gz, .zlib or none", {}};
}

}  // namespace ruleplane
