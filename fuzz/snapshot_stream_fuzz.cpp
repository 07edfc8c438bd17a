// Fuzzes the parser of etcd's snapshot stream (SnapshotStreamParser): the
// input is fed whole, then again in slices whose sizes come from its first
// byte, with a small line bound (1 KiB) so that the bound is reached. The
// two runs must agree: the same blob bytes and the same outcome, whatever
// the slicing; nothing may crash or hang.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "adapters/etcd/snapshot_stream.h"

namespace {

struct Outcome {
  std::string blobs;
  bool ok = true;
};

Outcome Run(std::string_view text, size_t slice) {
  using namespace ruleplane;
  SnapshotStreamParser parser(1024);
  Outcome outcome;
  auto sink = [&](std::string_view blob) -> Status {
    outcome.blobs.append(blob);
    return {};
  };
  for (size_t at = 0; at < text.size() && outcome.ok; at += slice) {
    outcome.ok = parser.Feed(text.substr(at, slice), sink).ok();
  }
  if (outcome.ok) outcome.ok = parser.Finish(sink).ok();
  if (outcome.ok && parser.blob_bytes() != outcome.blobs.size()) std::abort();
  return outcome;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const Outcome whole = Run(text, text.size() + 1);
  const Outcome sliced = Run(text, size > 0 ? data[0] % 17 + 1 : 1);
  if (whole.ok != sliced.ok) std::abort();
  if (whole.ok && whole.blobs != sliced.blobs) std::abort();
  return 0;
}
