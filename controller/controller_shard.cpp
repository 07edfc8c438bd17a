#include "controller/controller_shard.h"

#include <charconv>

namespace ruleplane {

uint64_t Fnv1a64(std::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

Result<ControllerShard> ControllerShard::Parse(std::string_view text) {
  const Error invalid{ErrorCode::kInvalidArgument,
                      "--shard is I/N with 0 <= I < N (shard I of N), not \"" + std::string(text) + "\"",
                      {}};
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return invalid;
  ControllerShard shard;
  const auto whole = [](std::string_view part, int64_t& number) {
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), number);
    return !part.empty() && error == std::errc() && end == part.data() + part.size();
  };
  if (!whole(text.substr(0, slash), shard.index_) || !whole(text.substr(slash + 1), shard.count_) ||
      shard.index_ < 0 || shard.count_ < 1 || shard.index_ >= shard.count_) {
    return invalid;
  }
  return shard;
}

bool ControllerShard::Owns(std::string_view key) const {
  return Fnv1a64(key) % static_cast<uint64_t>(count_) == static_cast<uint64_t>(index_);
}

std::string ControllerShard::LeaseName(const std::string& base) const {
  return base + "-shard-" + std::to_string(index_) + "-of-" + std::to_string(count_);
}

}  // namespace ruleplane
