#include "tests/support/test_pki.h"

#include <filesystem>
#include <fstream>
#include <vector>

#include "platform/process.h"

namespace ruleplane::testing {
namespace {

Status Openssl(std::vector<std::string> args) {
  args.insert(args.begin(), "openssl");
  auto run = RunCommand(args, std::chrono::seconds(60));
  if (!run.ok()) return run.error();
  if (run->exit_code != 0) {
    std::string shown;
    for (const std::string& arg : args) shown += arg + " ";
    return Error{ErrorCode::kIo, shown + "failed: " + run->err, {}};
  }
  return {};
}

Status WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out.flush()) return Error{ErrorCode::kIo, "cannot write " + path, {}};
  return {};
}

// A self-signed CA: `name`.crt and `name`.key in `dir`.
Status MakeCa(const std::string& dir, const std::string& name) {
  return Openssl({"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", "30", "-subj",
                  "/CN=" + name, "-keyout", dir + "/" + name + ".key", "-out", dir + "/" + name + ".crt"});
}

// A key and a certificate signed by dir/ca, with the extensions in `extensions`.
Status MakeSigned(const std::string& dir, const std::string& name, const std::string& common_name,
                  const std::string& extensions) {
  const std::string ext_file = dir + "/" + name + ".ext";
  if (Status written = WriteText(ext_file, extensions); !written.ok()) return written;
  if (Status request = Openssl({"req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=" + common_name,
                                "-keyout", dir + "/" + name + ".key", "-out", dir + "/" + name + ".csr"});
      !request.ok())
    return request;
  return Openssl({"x509", "-req", "-sha256", "-days", "30", "-in", dir + "/" + name + ".csr", "-CA",
                  dir + "/ca.crt", "-CAkey", dir + "/ca.key", "-CAcreateserial", "-extfile", ext_file, "-out",
                  dir + "/" + name + ".crt"});
}

// `openssl x509` cannot date a certificate in the past; `openssl ca` can.
Status MakeExpired(const std::string& dir, const std::string& csr, const std::string& out) {
  const std::string config = dir + "/expired-ca.cnf";
  std::ofstream(dir + "/index.txt").flush();
  Status written = WriteText(config, "[ca]\ndefault_ca = test_ca\n[test_ca]\ndatabase = " + dir +
                                         "/index.txt\nnew_certs_dir = " + dir + "\nserial = " + dir +
                                         "/ca.srl\ndefault_md = sha256\npolicy = any\n"
                                         "x509_extensions = client\n[any]\ncommonName = supplied\n"
                                         "[client]\nextendedKeyUsage = clientAuth\n");
  if (!written.ok()) return written;
  return Openssl({"ca", "-batch", "-notext", "-config", config, "-cert", dir + "/ca.crt", "-keyfile",
                  dir + "/ca.key", "-startdate", "20200101000000Z", "-enddate", "20200102000000Z", "-in", csr,
                  "-out", out});
}

}  // namespace

Result<TestPki> TestPki::Create(const std::string& dir, const std::vector<std::string>& member_ips) {
  std::error_code made;
  std::filesystem::create_directories(dir, made);
  if (made) return Error{ErrorCode::kIo, "cannot create " + dir + ": " + made.message(), {}};
  TestPki pki;
  pki.dir = dir;
  pki.ca_cert = dir + "/ca.crt";
  pki.member_cert = dir + "/member.crt";
  pki.member_key = dir + "/member.key";
  pki.client_cert = dir + "/client.crt";
  pki.client_key = dir + "/client.key";
  pki.expired_client_cert = dir + "/expired-client.crt";
  pki.other_ca_cert = dir + "/other-ca.crt";
  // The member Pods' DNS names of the tests' Etcd (<pod>.etcd-main-peer.default.svc), as
  // etcd-druid's certificates carry them.
  std::string names = "IP:127.0.0.1, DNS:localhost, DNS:*.etcd-main-peer.default.svc";
  for (const std::string& ip : member_ips) names += ", IP:" + ip;
  for (Status made_part :
       {MakeCa(dir, "ca"), MakeCa(dir, "other-ca"),
        MakeSigned(dir, "member", "etcd-member",
                   "subjectAltName = " + names + "\nextendedKeyUsage = serverAuth, clientAuth\n"),
        MakeSigned(dir, "client", "etcd-client", "extendedKeyUsage = clientAuth\n"),
        MakeExpired(dir, dir + "/client.csr", pki.expired_client_cert)}) {
    if (!made_part.ok()) return made_part.error();
  }
  return pki;
}

}  // namespace ruleplane::testing
