// ReopeningObjectStore's decisions over a store that refuses on command:
// when it opens anew, what it tries again, and what it never repeats.
#include "adapters/object_store/reopening_object_store.h"

#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <optional>
#include <string>

namespace ruleplane {
namespace {

constexpr std::optional<ErrorCode> kOk = std::nullopt;

// Answers each operation with the next queued code (success when none or
// kOk), and counts calls.
struct Script {
  std::deque<std::optional<ErrorCode>> answers;
  int calls = 0;
  Status Next() {
    ++calls;
    if (answers.empty()) return {};
    const std::optional<ErrorCode> code = answers.front();
    answers.pop_front();
    if (!code) return {};
    return Error{*code, "scripted " + std::string(ErrorCodeName(*code)), {}};
  }
};

class ScriptedStore : public ObjectStore {
 public:
  explicit ScriptedStore(Script& script) : script_(script) {}
  std::string Location() const override { return "scripted"; }
  std::string PrefixName() const override { return "main"; }
  Result<ObjectListing> List() const override {
    Status status = script_.Next();
    if (!status.ok()) return status.error();
    return ObjectListing{};
  }
  Status Read(const std::string&, const ChunkSink&) const override { return script_.Next(); }
  Status Write(const std::string&, const ObjectProducer&) override { return script_.Next(); }
  Status MoveFileIn(const std::string&, const std::string&) override { return script_.Next(); }
  Status Delete(const std::string&) override { return script_.Next(); }
  Result<std::string> ScratchDirectory() const override { return std::string("/tmp"); }
  std::string LocalPath(const std::string&) const override { return ""; }

 private:
  Script& script_;
};

struct Fixture {
  Script script;
  std::string credentials = "key=one";
  bool unreadable = false;
  int opened = 0;
  std::unique_ptr<ReopeningObjectStore> Make() {
    return std::make_unique<ReopeningObjectStore>(
        std::make_unique<ScriptedStore>(script), credentials,
        [this]() -> Result<std::unique_ptr<ObjectStore>> {
          ++opened;
          return std::unique_ptr<ObjectStore>(std::make_unique<ScriptedStore>(script));
        },
        [this]() -> Result<std::string> {
          if (unreadable) return Error{ErrorCode::kIo, "the Secret is being updated", {}};
          return credentials;
        });
  }
};

TEST(ReopeningObjectStore, UnchangedCredentialsNeverReopen) {
  Fixture fixture;
  auto store = fixture.Make();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(store->List().ok());
  EXPECT_EQ(fixture.opened, 0);
  EXPECT_EQ(fixture.script.calls, 3);
}

TEST(ReopeningObjectStore, ChangedCredentialsReopenBeforeTheNextOperationOnce) {
  Fixture fixture;
  auto store = fixture.Make();
  fixture.credentials = "key=two";
  ASSERT_TRUE(store->Delete("v2/x").ok());
  ASSERT_TRUE(store->Delete("v2/y").ok());
  EXPECT_EQ(fixture.opened, 1);
  EXPECT_EQ(store->reopened(), 1);
}

TEST(ReopeningObjectStore, ARefusalReopensAndIsTriedOnceMoreButAWriteIsNotRepeated) {
  Fixture fixture;
  auto store = fixture.Make();
  fixture.script.answers = {ErrorCode::kPermissionDenied, kOk};
  ASSERT_TRUE(store->List().ok());
  EXPECT_EQ(fixture.opened, 1);
  EXPECT_EQ(fixture.script.calls, 2);

  // Refused twice: the second refusal is the answer, no third try.
  fixture.script.answers = {ErrorCode::kPermissionDenied, ErrorCode::kPermissionDenied, kOk};
  Status moved = store->MoveFileIn("/tmp/f", "v2/f");
  ASSERT_FALSE(moved.ok());
  EXPECT_EQ(moved.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(fixture.script.calls, 4);

  // A Write's producer streams once: reopened for the next one, not repeated.
  fixture.script.answers = {ErrorCode::kPermissionDenied, kOk};
  Status written = store->Write("v2/w", [](const ChunkSink&) { return Status{}; });
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(fixture.script.calls, 5);
  EXPECT_EQ(fixture.opened, 3);
}

TEST(ReopeningObjectStore, OtherErrorsAreNotRetriedAndUnreadableCredentialsKeepTheOpenStore) {
  Fixture fixture;
  auto store = fixture.Make();
  fixture.script.answers = {ErrorCode::kUnavailable};
  EXPECT_EQ(store->Read("v2/r", [](std::string_view) { return Status{}; }).error().code,
            ErrorCode::kUnavailable);
  EXPECT_EQ(fixture.script.calls, 1);
  EXPECT_EQ(fixture.opened, 0);

  fixture.unreadable = true;
  fixture.credentials = "key=three";
  ASSERT_TRUE(store->List().ok());
  EXPECT_EQ(fixture.opened, 0);
  // Refused while the credentials cannot be read: the refusal says both.
  fixture.script.answers = {ErrorCode::kPermissionDenied};
  auto refused = store->List();
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("the credentials could not be read again"), std::string::npos)
      << refused.error().message;
  fixture.unreadable = false;
  ASSERT_TRUE(store->List().ok());
  EXPECT_EQ(fixture.opened, 1);
}

}  // namespace
}  // namespace ruleplane
