// The acting half against hostile input (issue 24): what reaches a request, a
// configuration or a command line from flags, files and etcd's answers is
// checked where it enters, and refused with a message that names it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "actions/local/etcd_config.h"
#include "adapters/local/initial_cluster.h"
#include "execution/journal.h"
#include "platform/http_client.h"
#include "tests/run_ruleplane.h"
#include "tests/support/temp_dir.h"

namespace ruleplane {
namespace {

// Class 3: libcurl spoke any protocol it knows; file:// printed a local file.
TEST(HostileInput, OnlyHttpAndHttpsAreSpokenAndNothingElseIsSent) {
  testing::TempDir dir("hostile-scheme");
  const std::string secret = dir.path() + "/secret";
  std::ofstream(secret) << "the content of a local file";
  HttpClient client;
  for (const std::string& url : {"file://" + secret, std::string("gopher://127.0.0.1:1/_x"),
                                 std::string("dict://127.0.0.1:1/x"), std::string("telnet://127.0.0.1:1"),
                                 std::string("FTP://127.0.0.1:1/"), std::string("127.0.0.1:2379")}) {
    auto response = client.Send("GET", url, "", std::chrono::seconds(2));
    ASSERT_FALSE(response.ok()) << url;
    EXPECT_EQ(response.error().code, ErrorCode::kInvalidArgument) << url;
    EXPECT_NE(response.error().message.find("only http:// and https://"), std::string::npos)
        << response.error().message;
    EXPECT_EQ(response.error().message.find("the content of a local file"), std::string::npos);
  }
  EXPECT_TRUE(CheckHttpUrl("HTTPS://etcd-main-client:2379").ok());
}

// Class 4: a token with a line break added headers of its choosing.
TEST(HostileInput, AHeaderWithALineBreakIsRefusedBeforeItIsSent) {
  HttpClient client;
  auto response = client.Send("GET", "http://127.0.0.1:1/", "", std::chrono::seconds(2),
                              {"Authorization: Bearer t\r\nX-Injected: 1"});
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().code, ErrorCode::kInvalidArgument) << response.error().message;
  EXPECT_NE(response.error().message.find("line break"), std::string::npos) << response.error().message;
}

// Class 4: member names and peer URLs from etcd's member list were pasted
// into initial-cluster: a member named "x=http://evil:2380,y" added members.
TEST(HostileInput, AMemberNameOrPeerUrlCannotAddMembersToTheConfiguration) {
  LocalMember member;
  member.name = "etcd-main-0";
  member.peer_url = "http://etcd-main-0.peer:2380";
  member.data_dir = "/var/etcd/data";
  EXPECT_TRUE(RenderEtcdConfig("", member, "etcd-main-0=http://etcd-main-0.peer:2380", "new").ok());
  for (const std::string& initial_cluster :
       {std::string("etcd-main-0=http://a:2380,x=http://evil:2380,y"), std::string("evil,x=http://b:2380"),
        std::string("etcd-main-0=http://a:2380\ninitial-cluster-token: stolen"),
        std::string("Upper=http://a:2380"), std::string("m=file:///etc/passwd"),
        std::string("m=http://a:2380 x"), std::string("")}) {
    auto rendered = RenderEtcdConfig("", member, initial_cluster, "new");
    ASSERT_FALSE(rendered.ok()) << initial_cluster;
    EXPECT_EQ(rendered.error().code, ErrorCode::kInvalidArgument);
  }
  member.name = "etcd-main-0\nforce-new-cluster: true";
  EXPECT_FALSE(RenderEtcdConfig("", member, "etcd-main-0=http://a:2380", "new").ok());
  EXPECT_EQ(InitialClusterNames("a=http://x:1,b=http://y:1,b=http://z:1"),
            (std::vector<std::string>{"a", "b", "b"}));
  EXPECT_TRUE(CheckMemberName("member-5ee3b6bb0e3ad1a7").ok()) << "a member added and not started";
}

// Class 9: journal text (a subject, a target, a message from the world) was
// printed raw, so an escape sequence in a member name rewrote the terminal.
TEST(HostileInput, HistoryPrintsJournalTextAsPrintableText) {
  const std::string path = testing_support::TempPath("journal.db");
  std::filesystem::remove(path);
  {
    auto journal = Journal::Open(path);
    ASSERT_TRUE(journal.ok()) << journal.error().message;
    auto snapshot = ParseSnapshot(R"({"apiVersion": "ruleplane.dev/v1", "kind": "EtcdMemberInitSnapshot",
        "observedAt": "2024-05-01T10:00:00Z"})");
    ASSERT_TRUE(snapshot.ok());
    Plan plan;
    PlanStep step;
    step.id = "r/x/0";
    step.action = "Prepare";
    step.target = "m0\x1b]0;owned\x07";
    step.params = Value::MakeMap({});
    plan.steps.push_back(step);
    auto id = (*journal)->BeginPlan(*snapshot, {}, plan, "member-init", "m0\x1b[2J\nplan 99 forged", false);
    ASSERT_TRUE(id.ok()) << id.error().message;
    ASSERT_TRUE((*journal)->FinishPlan(*id, "failed", "etcd said \x1b[31mred").ok());
  }
  const testing_support::CommandResult run = testing_support::Ruleplane("history --journal " + path);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.find('\x1b'), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find('\x07'), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("m0\\x1b[2J\\nplan 99 forged"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("\nplan 99"), std::string::npos) << "a forged line";
}

}  // namespace
}  // namespace ruleplane
