// A certificate authority and certificates for TLS tests, made by Debian's
// `openssl` in a directory of the test's own: a member certificate for
// 127.0.0.1 and localhost (server and client use, as etcd's peer listener
// needs both), a client certificate, an expired client certificate and a
// second CA that signed none of them.
//
//   auto pki = TestPki::Create(root + "/pki");
//   ASSERT_TRUE(pki.ok()) << pki.error().message;
//   cluster->EnableTls(*pki);          // client and peer TLS, client-cert-auth
//   EtcdClient client(EtcdClientConfig{urls, pki->ClientTls()});
#pragma once

#include <string>
#include <vector>

#include "engine/common/error.h"
#include "platform/http_client.h"

namespace ruleplane::testing {

struct TestPki {
  std::string dir;
  std::string ca_cert;      // the CA every certificate below is signed by
  std::string member_cert;  // CN etcd-member, SAN IP:127.0.0.1 DNS:localhost
                            // DNS:*.etcd-main-peer.default.svc; serverAuth and clientAuth
  std::string member_key;
  std::string client_cert;  // CN etcd-client; clientAuth
  std::string client_key;
  std::string expired_client_cert;  // as client_cert, valid only in 2020 (same key)
  std::string other_ca_cert;        // a CA that signed nothing here

  // `member_ips`: more addresses the member certificate is for (Pod IPs).
  static Result<TestPki> Create(const std::string& dir, const std::vector<std::string>& member_ips = {});

  // What a client of the members presents: the CA, the client certificate and key.
  TlsConfig ClientTls() const { return Files(ca_cert, client_cert, client_key); }
  static TlsConfig Files(const std::string& ca, const std::string& cert = "", const std::string& key = "") {
    TlsConfig tls;
    tls.ca_file = ca;
    tls.cert_file = cert;
    tls.key_file = key;
    return tls;
  }
  // ruleplane's flags for the same: "--cacert F --cert F --key F".
  std::string ClientFlags() const {
    return "--cacert " + ca_cert + " --cert " + client_cert + " --key " + client_key;
  }
};

}  // namespace ruleplane::testing
