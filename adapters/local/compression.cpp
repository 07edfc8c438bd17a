#include "adapters/local/compression.h"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

namespace ruleplane {
namespace {

constexpr size_t kPiece = size_t{1} << 16;

// Counts what goes in and out and refuses the output past either bound.
class Meter {
 public:
  Meter(const DecompressionLimits& limits, const ChunkSink& sink) : limits_(limits), sink_(sink) {}

  void Consumed(size_t bytes) { in_ += static_cast<int64_t>(bytes); }

  Status Emit(std::string_view piece) {
    if (piece.empty()) return {};
    out_ += static_cast<int64_t>(piece.size());
    if (out_ > limits_.max_bytes) {
      return Error{ErrorCode::kIo,
                   "is larger than the limit of " + FormatBytes(limits_.max_bytes) + " (decompressed)",
                   {}};
    }
    if (out_ > limits_.ratio_floor_bytes && out_ > limits_.max_ratio * std::max<int64_t>(in_, 1)) {
      return Error{ErrorCode::kIo,
                   "expands more than " + std::to_string(limits_.max_ratio) + "-fold (" + FormatBytes(in_) +
                       " to over " + FormatBytes(out_) + "), the limit for compressed snapshots",
                   {}};
    }
    return sink_(piece);
  }

 private:
  const DecompressionLimits& limits_;
  const ChunkSink& sink_;
  int64_t in_ = 0, out_ = 0;
};

class Decoder {
 public:
  virtual ~Decoder() = default;
  // Decodes `input` (consumed whole) into `meter`.
  virtual Status Feed(std::string_view input, Meter& meter) = 0;
  // After the last input: whether the data ended properly.
  virtual Status Finish() = 0;
};

class PlainDecoder final : public Decoder {
 public:
  Status Feed(std::string_view input, Meter& meter) override {
    meter.Consumed(input.size());
    return meter.Emit(input);
  }
  Status Finish() override { return {}; }
};

// window_bits: 15 + 16 for gzip, 15 for zlib.
class InflateDecoder final : public Decoder {
 public:
  InflateDecoder(int window_bits, const char* what) : what_(what) {
    started_ = inflateInit2(&stream_, window_bits) == Z_OK;
  }
  ~InflateDecoder() override {
    if (started_) inflateEnd(&stream_);
  }

  Status Feed(std::string_view input, Meter& meter) override {
    if (!started_) return Error{ErrorCode::kInternal, "zlib cannot start", {}};
    if (ended_) return {};  // anything after the end is not read, as before
    stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
    stream_.avail_in = static_cast<uInt>(input.size());
    while (!ended_) {
      const uInt before = stream_.avail_in;
      stream_.next_out = reinterpret_cast<Bytef*>(buffer_);
      stream_.avail_out = sizeof buffer_;
      const int result = inflate(&stream_, Z_NO_FLUSH);
      meter.Consumed(before - stream_.avail_in);
      if (result != Z_OK && result != Z_STREAM_END && result != Z_BUF_ERROR) return Invalid();
      if (Status emitted = meter.Emit(std::string_view(buffer_, sizeof buffer_ - stream_.avail_out));
          !emitted.ok())
        return emitted;
      ended_ = result == Z_STREAM_END;
      if (result == Z_BUF_ERROR || (stream_.avail_in == 0 && stream_.avail_out != 0)) break;
    }
    return {};
  }
  Status Finish() override { return ended_ ? Status{} : Invalid(); }

 private:
  Error Invalid() const { return Error{ErrorCode::kParse, std::string("not valid ") + what_ + " data", {}}; }

  z_stream stream_{};
  const char* what_;
  bool started_ = false, ended_ = false;
  char buffer_[kPiece];
};

// Go's compress/lzw reader, LSB order, literal width 8 (etcd-backup-restore's
// "lzw" compression policy): codes start 9 bits wide after the 256 literals,
// clear (256) and end (257), and grow up to 12 bits. `next_` is the code the
// next entry gets (Go's `hi`); the width grows as soon as `next_` needs more
// bits, and a full table takes no new entries until a clear code.
class LzwDecoder final : public Decoder {
 public:
  LzwDecoder() : prefix_(1 << kMaxWidth), suffix_(1 << kMaxWidth) {}

  Status Feed(std::string_view input, Meter& meter) override {
    meter.Consumed(input.size());
    for (unsigned char byte : input) {
      if (ended_) break;
      bits_ |= static_cast<uint32_t>(byte) << count_;
      count_ += 8;
      while (count_ >= width_ && !ended_) {
        if (Status decoded = Code(); !decoded.ok()) return decoded;
        if (out_.size() >= kPiece) {
          if (Status emitted = meter.Emit(out_); !emitted.ok()) return emitted;
          out_.clear();
        }
      }
    }
    Status emitted = meter.Emit(out_);
    out_.clear();
    return emitted;
  }
  Status Finish() override {
    if (!ended_) return Error{ErrorCode::kParse, "LZW data ends without its end code", {}};
    return {};
  }

 private:
  static constexpr int kClear = 256, kEnd = 257, kMaxWidth = 12, kNone = -1;

  Status Code() {
    const int code = static_cast<int>(bits_ & ((1u << width_) - 1));
    bits_ >>= width_;
    count_ -= width_;
    if (code == kEnd) {
      ended_ = true;
      return {};
    }
    if (code == kClear) {
      width_ = 9;
      next_ = kEnd + 1;
      last_ = kNone;
      return {};
    }
    // A code not defined yet is valid only as the entry being defined
    // (the previous code's string and its own first byte).
    if (code > next_ || (code == next_ && last_ == kNone)) {
      return Error{ErrorCode::kParse, "not valid LZW data (code " + std::to_string(code) + ")", {}};
    }
    entry_.clear();
    for (int c = code == next_ ? last_ : code;; c = prefix_[static_cast<size_t>(c)]) {
      if (c < kClear) {
        entry_.push_back(static_cast<char>(c));
        break;
      }
      entry_.push_back(suffix_[static_cast<size_t>(c)]);
    }
    std::reverse(entry_.begin(), entry_.end());
    if (code == next_) entry_.push_back(entry_[0]);
    out_ += entry_;
    if (last_ != kNone && next_ < (1 << kMaxWidth)) {
      prefix_[static_cast<size_t>(next_)] = last_;
      suffix_[static_cast<size_t>(next_)] = entry_[0];
      ++next_;
    }
    last_ = code;
    if (next_ >= (1 << width_) && width_ < kMaxWidth) ++width_;
    return {};
  }

  std::vector<int> prefix_;
  std::vector<char> suffix_;
  std::string out_, entry_;
  int width_ = 9, next_ = kEnd + 1, last_ = kNone;
  uint32_t bits_ = 0;
  int count_ = 0;
  bool ended_ = false;
};

Result<std::unique_ptr<Decoder>> MakeDecoder(std::string_view suffix) {
  if (suffix.empty()) return std::unique_ptr<Decoder>(std::make_unique<PlainDecoder>());
  if (suffix == ".gz") return std::unique_ptr<Decoder>(std::make_unique<InflateDecoder>(15 + 16, "gzip"));
  if (suffix == ".zlib") return std::unique_ptr<Decoder>(std::make_unique<InflateDecoder>(15, "zlib"));
  if (suffix == ".Z") return std::unique_ptr<Decoder>(std::make_unique<LzwDecoder>());
  return Error{ErrorCode::kInvalidArgument, "unknown compression suffix '" + std::string(suffix) + "'", {}};
}

// Compresses what `feed` hands it into `sink`; window_bits as for inflate.
class Deflater {
 public:
  explicit Deflater(int window_bits) {
    started_ =
        deflateInit2(&stream_, Z_DEFAULT_COMPRESSION, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) == Z_OK;
  }
  ~Deflater() {
    if (started_) deflateEnd(&stream_);
  }
  Status Feed(std::string_view input, bool last, const ChunkSink& sink) {
    if (!started_) return Error{ErrorCode::kInternal, "zlib cannot start", {}};
    stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
    stream_.avail_in = static_cast<uInt>(input.size());
    int result = Z_OK;
    do {
      stream_.next_out = reinterpret_cast<Bytef*>(buffer_);
      stream_.avail_out = sizeof buffer_;
      result = deflate(&stream_, last ? Z_FINISH : Z_NO_FLUSH);
      if (result == Z_STREAM_ERROR) return Error{ErrorCode::kInternal, "zlib could not compress", {}};
      if (Status written = sink(std::string_view(buffer_, sizeof buffer_ - stream_.avail_out)); !written.ok())
        return written;
    } while (stream_.avail_out == 0 || (last && result != Z_STREAM_END));
    return {};
  }

 private:
  z_stream stream_{};
  bool started_ = false;
  char buffer_[kPiece];
};

Result<int> DeflateWindowBits(std::string_view suffix) {
  if (suffix == ".gz") return 15 + 16;
  if (suffix == ".zlib") return 15;
  return Error{ErrorCode::kInvalidArgument,
               "ruleplane writes no '" + std::string(suffix) + "' snapshots: use .gz, .zlib or none",
               {}};
}

}  // namespace

std::string_view CompressionSuffix(std::string_view name) {
  if (name.size() > 6 && name.substr(name.size() - 6) == ".final") name.remove_suffix(6);
  for (std::string_view suffix : {".gz", ".zlib", ".Z"}) {
    if (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix) return suffix;
  }
  return {};
}

Result<std::string> Decompress(std::string_view data, std::string_view suffix,
                               const DecompressionLimits& limits) {
  auto decoder = MakeDecoder(suffix);
  if (!decoder.ok()) return decoder.error();
  std::string out;
  const ChunkSink sink = [&](std::string_view piece) -> Status {
    out.append(piece);
    return {};
  };
  Meter meter(limits, sink);
  for (size_t at = 0; at < data.size(); at += kPiece) {
    if (Status fed = (*decoder)->Feed(data.substr(at, kPiece), meter); !fed.ok()) return fed.error();
  }
  if (Status finished = (*decoder)->Finish(); !finished.ok()) return finished.error();
  return out;
}

Status DecompressStream(std::string_view suffix, const DecompressionLimits& limits,
                        const std::function<Status(const ChunkSink&)>& source, const ChunkSink& sink) {
  auto decoder = MakeDecoder(suffix);
  if (!decoder.ok()) return decoder.error();
  Meter meter(limits, sink);
  if (Status fed = source([&](std::string_view piece) { return (*decoder)->Feed(piece, meter); }); !fed.ok())
    return fed;
  return (*decoder)->Finish();
}

Status DecompressFile(const std::string& path, std::string_view suffix, const DecompressionLimits& limits,
                      const ChunkSink& sink) {
  const Status status = DecompressStream(
      suffix, limits, [&](const ChunkSink& feed) { return ReadFileInPieces(path, Links::kRefuse, feed); },
      sink);
  // Errors of the data are named by the path; a read error already names it.
  if (!status.ok() && status.error().message.find(path) == std::string::npos)
    return Error{status.error().code, path + ": " + status.error().message, {}};
  return status;
}

Result<std::string> Compress(std::string_view data, std::string_view suffix) {
  if (suffix.empty()) return std::string(data);
  auto window_bits = DeflateWindowBits(suffix);
  if (!window_bits.ok()) return window_bits.error();
  std::string out;
  Deflater deflater(*window_bits);
  const ChunkSink sink = [&](std::string_view piece) -> Status {
    out.append(piece);
    return {};
  };
  for (size_t at = 0;; at += kPiece) {
    const bool last = at + kPiece >= data.size();
    if (Status fed = deflater.Feed(data.substr(std::min(at, data.size()), kPiece), last, sink); !fed.ok())
      return fed.error();
    if (last) break;
  }
  return out;
}

Status CompressFile(const std::string& path, std::string_view suffix, const ChunkSink& sink) {
  auto window_bits = DeflateWindowBits(suffix);
  if (!window_bits.ok()) return window_bits.error();
  Deflater deflater(*window_bits);
  if (Status read = ReadFileInPieces(
          path, Links::kRefuse, [&](std::string_view piece) { return deflater.Feed(piece, false, sink); });
      !read.ok())
    return read;
  return deflater.Feed({}, true, sink);
}

}  // namespace ruleplane
