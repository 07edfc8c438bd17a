#include "controller/controller_shard.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace ruleplane {
namespace {

TEST(ControllerShard, HashesWithFnv1a64AsPublished) {
  // Reference values of the FNV-1a 64-bit test suite (isthe.com/chongo/tech/comp/fnv).
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(Fnv1a64("foobar"), 0x85944171f73967e8ULL);
}

TEST(ControllerShard, ParsesIndexOfCount) {
  auto shard = ControllerShard::Parse("1/3");
  ASSERT_TRUE(shard.ok()) << shard.error().message;
  EXPECT_EQ(shard->index(), 1);
  EXPECT_EQ(shard->count(), 3);
  EXPECT_EQ(shard->LeaseName("ruleplane-controller"), "ruleplane-controller-shard-1-of-3");
  for (const char* bad : {"3/3", "-1/2", "0/0", "1", "/2", "1/", "a/2", "1/2x", " 1/2", "1/-2"}) {
    auto parsed = ControllerShard::Parse(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument) << bad;
  }
}

TEST(ControllerShard, EveryKeyBelongsToExactlyOneShard) {
  const ControllerShard whole;
  std::set<int64_t> used;
  for (int i = 0; i < 200; ++i) {
    const std::string key = "shoot--dev--" + std::to_string(i) + "/etcd-main";
    EXPECT_TRUE(whole.Owns(key));
    int owners = 0;
    for (int index = 0; index < 3; ++index) {
      auto shard = ControllerShard::Parse(std::to_string(index) + "/3");
      ASSERT_TRUE(shard.ok());
      if (shard->Owns(key)) {
        ++owners;
        used.insert(index);
        EXPECT_EQ(static_cast<int64_t>(Fnv1a64(key) % 3), index);
      }
    }
    EXPECT_EQ(owners, 1) << key;
  }
  EXPECT_EQ(used.size(), 3u) << "200 keys spread over every shard";
}

}  // namespace
}  // namespace ruleplane
