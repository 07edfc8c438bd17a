#include "platform/tls_files.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cstdio>
#include <ctime>
#include <memory>

namespace ruleplane {
namespace {

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};
struct X509Deleter {
  void operator()(X509* certificate) const { X509_free(certificate); }
};
struct KeyDeleter {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using UniqueFile = std::unique_ptr<std::FILE, FileCloser>;
using UniqueX509 = std::unique_ptr<X509, X509Deleter>;

Error FileError(const std::string& role, const std::string& path, const std::string& problem) {
  return Error{ErrorCode::kInvalidArgument, role + " " + path + " " + problem, {}};
}

std::string Utc(const ASN1_TIME* time) {
  std::tm parts{};
  if (ASN1_TIME_to_tm(time, &parts) != 1) return "an unreadable date";
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &parts);
  return text;
}

// Every certificate in the PEM file `path` (at least one), each valid at `now`.
Result<UniqueX509> CheckCertificates(const std::string& role, const std::string& path, std::time_t now) {
  UniqueFile file(std::fopen(path.c_str(), "r"));
  if (!file) return FileError(role, path, "cannot be read");
  UniqueX509 first;
  while (UniqueX509 certificate{PEM_read_X509(file.get(), nullptr, nullptr, nullptr)}) {
    if (X509_cmp_time(X509_get0_notAfter(certificate.get()), &now) < 0)
      return FileError(role, path, "expired on " + Utc(X509_get0_notAfter(certificate.get())));
    if (X509_cmp_time(X509_get0_notBefore(certificate.get()), &now) > 0)
      return FileError(role, path, "is not valid before " + Utc(X509_get0_notBefore(certificate.get())));
    if (!first) first = std::move(certificate);
  }
  ERR_clear_error();  // the read that ended the loop
  if (!first) return FileError(role, path, "holds no PEM certificate");
  return first;
}

}  // namespace

Status CheckTlsFiles(const TlsConfig& tls, std::chrono::system_clock::time_point now, std::string_view side) {
  const std::string certificate_role = std::string(side) + " certificate";
  const std::string key_role = std::string(side) + " key";
  const std::time_t at = std::chrono::system_clock::to_time_t(now);
  if (!tls.ca_file.empty()) {
    if (auto ca = CheckCertificates("CA file", tls.ca_file, at); !ca.ok()) return ca.error();
  }
  if (tls.cert_file.empty()) return {};
  auto certificate = CheckCertificates(certificate_role, tls.cert_file, at);
  if (!certificate.ok()) return certificate.error();
  const std::string& key_path = tls.key_file.empty() ? tls.cert_file : tls.key_file;
  UniqueFile file(std::fopen(key_path.c_str(), "r"));
  if (!file) return FileError(key_role, key_path, "cannot be read");
  std::unique_ptr<EVP_PKEY, KeyDeleter> key{PEM_read_PrivateKey(file.get(), nullptr, nullptr, nullptr)};
  ERR_clear_error();
  if (!key) return FileError(key_role, key_path, "holds no PEM private key (or one with a passphrase)");
  if (X509_check_private_key(certificate->get(), key.get()) != 1) {
    ERR_clear_error();
    return FileError(key_role, key_path, "is not the key of " + certificate_role + " " + tls.cert_file);
  }
  return {};
}

}  // namespace ruleplane
