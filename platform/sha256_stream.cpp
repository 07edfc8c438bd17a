#include "platform/sha256_stream.h"

#include <openssl/evp.h>

namespace ruleplane {

constexpr size_t kDigestSize = 32;

struct Sha256Stream::Context {
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  ~Context() { EVP_MD_CTX_free(md); }
};

Sha256Stream::Sha256Stream() : context_(std::make_unique<Context>()) {
  EVP_DigestInit_ex(context_->md, EVP_sha256(), nullptr);
}

Sha256Stream::~Sha256Stream() = default;

void Sha256Stream::Update(std::string_view data) { EVP_DigestUpdate(context_->md, data.data(), data.size()); }

std::string Sha256Stream::Finish() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_DigestFinal_ex(context_->md, digest, &size);
  return std::string(reinterpret_cast<const char*>(digest), size);
}

void SnapshotTrailerCheck::Update(std::string_view data) {
  if (data.size() >= kDigestSize) {
    hash_.Update(tail_);
    hash_.Update(data.substr(0, data.size() - kDigestSize));
    tail_.assign(data.substr(data.size() - kDigestSize));
    return;
  }
  tail_.append(data);
  if (tail_.size() > kDigestSize) {
    hash_.Update(std::string_view(tail_).substr(0, tail_.size() - kDigestSize));
    tail_.erase(0, tail_.size() - kDigestSize);
  }
}

Status SnapshotTrailerCheck::Finish(const std::string& what) {
  if (tail_.size() < kDigestSize) return Error{ErrorCode::kIo, what + ": too short for a snapshot", {}};
  if (hash_.Finish() != tail_) {
    return Error{
        ErrorCode::kIo, what + ": checksum mismatch: the last 32 bytes are not the SHA-256 of the rest", {}};
  }
  return {};
}

}  // namespace ruleplane
