// Sets of rules as arrays of 64-bit words: bit r of word r / 64 is rule r.
// Plain functions over spans of words, so that the matcher can keep its
// working set on the stack and the column index can store its bitsets in one
// flat array.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>

namespace ruleplane::bitset {

inline int WordCount(int bits) { return std::max(1, (bits + 63) / 64); }

// Sets bits [0, bits) and clears the rest of the words.
inline void SetFirst(uint64_t* words, int word_count, int bits) {
  for (int w = 0; w < word_count; ++w) {
    const int remaining = bits - w * 64;
    words[w] = remaining >= 64 ? ~uint64_t{0} : (remaining <= 0 ? 0 : (uint64_t{1} << remaining) - 1);
  }
}

inline void Set(uint64_t* words, int bit) { words[bit / 64] |= uint64_t{1} << (bit % 64); }

inline void Clear(uint64_t* words, int bit) { words[bit / 64] &= ~(uint64_t{1} << (bit % 64)); }

inline bool Test(const uint64_t* words, int bit) { return (words[bit / 64] >> (bit % 64)) & 1; }

inline void AndWith(uint64_t* words, const uint64_t* other, int word_count) {
  for (int w = 0; w < word_count; ++w) words[w] &= other[w];
}

inline void AndNotWith(uint64_t* words, const uint64_t* other, int word_count) {
  for (int w = 0; w < word_count; ++w) words[w] &= ~other[w];
}

inline bool Intersects(const uint64_t* a, const uint64_t* b, int word_count) {
  for (int w = 0; w < word_count; ++w) {
    if ((a[w] & b[w]) != 0) return true;
  }
  return false;
}

// words |= a & b
inline void OrWithBoth(uint64_t* words, const uint64_t* a, const uint64_t* b, int word_count) {
  for (int w = 0; w < word_count; ++w) words[w] |= a[w] & b[w];
}

// Calls visit(bit) for every set bit, in increasing order, while it returns
// true. Returns false when a visit stopped the walk.
template <typename Visit>
bool ForEach(const uint64_t* words, int word_count, Visit visit) {
  for (int w = 0; w < word_count; ++w) {
    for (uint64_t word = words[w]; word != 0; word &= word - 1) {
      if (!visit(w * 64 + std::countr_zero(word))) return false;
    }
  }
  return true;
}

}  // namespace ruleplane::bitset
