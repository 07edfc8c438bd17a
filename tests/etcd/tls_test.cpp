// Real etcd 3.4 members with client and peer TLS and client-cert-auth, from a
// CA and certificates that `openssl` makes for the test: member-init,
// `ruleplane backup` and the restore after a lost quorum work with client
// certificates, and a certificate that cannot work is refused with an error
// naming its file.
#include <filesystem>

#include <gtest/gtest.h>

#include "platform/failure_point.h"
#include "platform/tls_files.h"
#include "tests/support/member_harness.h"

namespace ruleplane::testing {
namespace {

class EtcdTls : public ::testing::Test, protected MemberHarness {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Create(size_, "etcd-tls").ok());
    Status tls = EnableTls();
    ASSERT_TRUE(tls.ok()) << tls.error().message;
  }

  void TearDown() override {
    if (HasFailure()) {
      for (int i = 0; i < size_; ++i)
        std::cerr << "--- " << cluster_->member(i).log_path << " kept in " << root_->path() << "\n";
    }
  }

  // `ruleplane backup full` against the cluster with these TLS flags.
  Outcome BackupWith(const std::string& tls_flags) const {
    return Ruleplane("backup full --endpoints " + Endpoints() + " " + StoreFlags() + " " + tls_flags);
  }
};

class SingleMemberTls : public EtcdTls {
 protected:
  SingleMemberTls() { size_ = 1; }
};

TEST_F(EtcdTls, MembersWithClientCertificatesBootstrapBackUpAndAreRebuiltAfterAQuorumLoss) {
  for (const EtcdMemberSpec& member : {cluster_->member(0), cluster_->member(1)})
    ASSERT_EQ(member.client_url.rfind("https://", 0), 0u) << member.client_url;
  // Bootstrap, backups while a writer writes, every member lost, restored from the store.
  ASSERT_NO_FATAL_FAILURE(RebuildAfterQuorumLoss(2));
  for (int i = 0; i < size_; ++i) {
    EXPECT_TRUE(Contains(Slurp(Config(i)), "client-cert-auth: true"))
        << "member-init dropped the template's TLS: " << Config(i);
  }
  // Without a client certificate the members answer nothing.
  EtcdClient anonymous(
      EtcdClientConfig{cluster_->ClientUrls(), TestPki::Files(pki_->ca_cert), std::chrono::seconds(5)});
  RequestLog reads;
  EXPECT_FALSE(anonymous.MemberList(reads).ok()) << "client-cert-auth is off";
  ExpectHealthyCluster();
}

// etcd-druid issues 420 and 886: an Etcd created without peer TLS gets
// spec.etcd.peerUrlTls later. A rolling update stops one member at a time,
// highest ordinal first; member-init starts each again from the changed
// template: its peer URL is updated in the live cluster (MemberUpdate), then
// it starts at https. The other members reach it on the streams it opens
// (they have no peer certificate yet), so the cluster keeps its quorum
// throughout: a writer never stops and no acknowledged key is lost. One
// start is killed right after the update and one right before it.
class PeerTlsMove : public EtcdTls {
 protected:
  void SetUp() override { ASSERT_TRUE(Create(size_, "peer-tls-move").ok()); }
};

TEST_F(PeerTlsMove, APlainClusterMovesToPeerTlsOneMemberAtATimeWithoutLosingAWrite) {
  ASSERT_NO_FATAL_FAILURE(Bootstrap());
  NumberedWriter writer(cluster_->ClientUrls(), "move/");
  writer.Start();
  NumberedWriter after_each(cluster_->ClientUrls(), "after/");
  const std::vector<std::string> plain_peers = {cluster_->member(0).peer_url, cluster_->member(1).peer_url,
                                                cluster_->member(2).peer_url};
  Status tls = EnableTls(/*peers_only=*/true);
  ASSERT_TRUE(tls.ok()) << tls.error().message;

  for (int i = size_ - 1; i >= 0; --i) {
    const EtcdMemberSpec& member = cluster_->member(i);
    ASSERT_EQ(member.peer_url.rfind("https://", 0), 0u) << member.peer_url;
    EtcdClient client = cluster_->Client();
    RequestLog reads;
    auto stopping = client.MemberStatus(member.client_url, reads);
    ASSERT_TRUE(stopping.ok()) << stopping.error().message;
    cluster_->StopMember(i);
    // When the stopped member led, the others elect a new leader first, so that
    // member-init finds the live quorum the update needs. (Without one it starts
    // the member without the update, I19, and member-agent repairs the list:
    // MemberAgentTest.AMemberTheListHasAtAnotherPeerUrlIsUpdatedToTheOneItAdvertises.)
    ASSERT_TRUE(Eventually(
        [&] {
          for (int j = 0; j < size_; ++j) {
            if (j == i) continue;
            auto status = client.MemberStatus(cluster_->member(j).client_url, reads);
            if (!status.ok() || status->leader == 0 || status->leader == stopping->member_id) return false;
          }
          return true;
        },
        std::chrono::seconds(30)))
        << "no new leader after m" << i << " stopped";
    const std::string etcd = WriteEtcd(i, StatusOfCluster({member.name}));

    Outcome dry = MemberInitOf(i, etcd, "--dry-run");
    ASSERT_EQ(dry.exit_code, 0) << dry.out << dry.err;
    EXPECT_TRUE(Contains(dry.out, "live-member-peer-url-changed")) << dry.out;
    EXPECT_TRUE(Contains(dry.out, "/v3/cluster/member/update")) << dry.out;

    const char* failpoint = i == 2   ? "RULEPLANE_FAILPOINT=after:UpdateMemberPeerUrl"
                            : i == 1 ? "RULEPLANE_FAILPOINT=before:UpdateMemberPeerUrl"
                                     : "";
    if (*failpoint != '\0') {
      Outcome killed = MemberInitOf(i, etcd, "", failpoint);
      ASSERT_EQ(killed.exit_code, kFailPointExitCode) << killed.out << killed.err;
    }
    Outcome run = MemberInitOf(i, etcd);
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    // Killed after the update, the rerun finds the member at its new URL and only starts it.
    EXPECT_EQ(Contains(run.out, "live-member-peer-url-changed"), i != 2) << run.out;
    const std::string config = Slurp(Config(i));
    EXPECT_TRUE(Contains(config, "listen-peer-urls: " + member.peer_url)) << config;
    EXPECT_TRUE(Contains(config, "peer-transport-security:")) << config;

    ASSERT_TRUE(cluster_->StartMemberWithConfig(i, Config(i)).ok());
    ASSERT_TRUE(cluster_->WaitReady(i).ok()) << member.log_path;
    auto view = ViewOf(i);
    ASSERT_TRUE(view.ok()) << view.error().message;
    for (int j = 0; j < size_; ++j) {
      const std::string expected =
          j >= i ? cluster_->member(j).peer_url : plain_peers[static_cast<size_t>(j)];
      EXPECT_TRUE(std::any_of(view->members.begin(), view->members.end(),
                              [&](const std::string& line) { return line.ends_with(" " + expected); }))
          << "m" << j << " should be at " << expected;
    }
    ASSERT_TRUE(after_each.WriteSome(10).ok()) << "the cluster takes no writes after m" << i << " moved";
  }
  writer.Stop();
  ExpectHealthyCluster();
  ExpectNoKeyLost(writer);
  ExpectNoKeyLost(after_each);
  Outcome history = History(0);
  ASSERT_EQ(history.exit_code, 0) << history.err;
  EXPECT_TRUE(Contains(history.out, "UpdateMemberPeerUrl")) << history.out;
}

TEST_F(SingleMemberTls, ACertificateThatCannotWorkIsRefusedNamingItsFile) {
  ASSERT_TRUE(cluster_->StartAll().ok());
  const TestPki& pki = *pki_;
  Outcome good = BackupWith(pki.ClientFlags());
  ASSERT_EQ(good.exit_code, 0) << good.out << good.err;

  // The server's certificate is not signed by the CA given.
  Outcome wrong_ca =
      BackupWith("--cacert " + pki.other_ca_cert + " --cert " + pki.client_cert + " --key " + pki.client_key);
  EXPECT_NE(wrong_ca.exit_code, 0);
  EXPECT_TRUE(Contains(wrong_ca.err, "does not verify against CA file " + pki.other_ca_cert)) << wrong_ca.err;

  // The client certificate expired in 2020.
  Outcome expired = BackupWith("--cacert " + pki.ca_cert + " --cert " + pki.expired_client_cert + " --key " +
                               pki.client_key);
  EXPECT_NE(expired.exit_code, 0);
  EXPECT_TRUE(
      Contains(expired.err, "client certificate " + pki.expired_client_cert + " expired on 2020-01-02"))
      << expired.err;

  // A key that is not the certificate's, and no client certificate at all.
  Outcome wrong_key =
      BackupWith("--cacert " + pki.ca_cert + " --cert " + pki.client_cert + " --key " + pki.member_key);
  EXPECT_NE(wrong_key.exit_code, 0);
  EXPECT_TRUE(Contains(wrong_key.err, "client key " + pki.member_key +
                                          " is not the key of client certificate " + pki.client_cert))
      << wrong_key.err;
  Outcome no_certificate = BackupWith("--cacert " + pki.ca_cert);
  EXPECT_NE(no_certificate.exit_code, 0);
  EXPECT_TRUE(
      Contains(no_certificate.err, "requires client certificates ends the connection so, and none was given"))
      << no_certificate.err;

  // None of them left a snapshot behind: only the good backup is in the store.
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  auto listing = store->List();
  ASSERT_TRUE(listing.ok()) << listing.error().message;
  EXPECT_EQ(listing->snapshots.size(), 1u);
  EXPECT_TRUE(listing->warnings.empty());
}

TEST(TlsFiles, EachProblemNamesItsFile) {
  TempDir dir("tls-files");
  auto pki = TestPki::Create(dir.path() + "/pki");
  ASSERT_TRUE(pki.ok()) << pki.error().message;
  const auto now = std::chrono::system_clock::now();
  EXPECT_TRUE(CheckTlsFiles(pki->ClientTls(), now).ok());

  const Status expired =
      CheckTlsFiles(TestPki::Files(pki->ca_cert, pki->expired_client_cert, pki->client_key), now);
  ASSERT_FALSE(expired.ok());
  EXPECT_TRUE(
      Contains(expired.error().message, pki->expired_client_cert + " expired on 2020-01-02 00:00:00 UTC"))
      << expired.error().message;
  // In 2020 that certificate was valid, and the others not yet.
  const auto in_2020 = std::chrono::system_clock::from_time_t(1577880000);  // 2020-01-01 12:00 UTC
  const Status early =
      CheckTlsFiles(TestPki::Files(pki->ca_cert, pki->expired_client_cert, pki->client_key), in_2020);
  ASSERT_FALSE(early.ok());
  EXPECT_TRUE(Contains(early.error().message, "CA file " + pki->ca_cert + " is not valid before"))
      << early.error().message;

  const Status missing = CheckTlsFiles(TestPki::Files(dir.path() + "/none.crt"), now);
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(Contains(missing.error().message, dir.path() + "/none.crt cannot be read"));
  const Status not_pem = CheckTlsFiles(TestPki::Files(pki->ca_cert, pki->client_key, pki->client_key), now);
  ASSERT_FALSE(not_pem.ok());
  EXPECT_TRUE(Contains(not_pem.error().message,
                       "client certificate " + pki->client_key + " holds no PEM certificate"))
      << not_pem.error().message;
}

}  // namespace
}  // namespace ruleplane::testing
