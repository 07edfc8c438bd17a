// Fuzzes the delta file reader (adapters/local/delta_file.h), the reader the
// replay uses and that `backup delta` checks a delta with before storing it:
// any input parses or fails cleanly; what parses is ordered by revision, and
// written again (SerializeDelta) it parses to the same events. An input that
// starts with '#' is the JSON alone: the driver appends its SHA-256, so that
// the fuzzer reaches the JSON reader without forging digests.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "adapters/local/delta_file.h"
#include "engine/common/sha256.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ruleplane;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (!bytes.empty() && bytes.front() == '#') {
    bytes.erase(0, 1);
    bytes += Sha256Digest(bytes);
  }
  auto events = ParseDelta(bytes);
  if (!events.ok()) return 0;
  int64_t previous = 0;
  for (const EtcdEvent& event : *events) {
    if (event.kv.mod_revision <= 0 || event.kv.mod_revision < previous) std::abort();
    previous = event.kv.mod_revision;
  }
  size_t grouped = 0;
  for (const RevisionGroup& group : GroupByRevision(*events)) grouped += group.events.size();
  if (grouped != events->size()) std::abort();
  auto again = ParseDelta(SerializeDelta(*events, "2024-05-01T10:00:00Z"));
  if (!again.ok() || again->size() != events->size()) std::abort();
  for (size_t i = 0; i < events->size(); ++i) {
    const KeyValue &a = (*events)[i].kv, &b = (*again)[i].kv;
    if ((*events)[i].type != (*again)[i].type || a.key != b.key || a.value != b.value ||
        a.mod_revision != b.mod_revision || a.create_revision != b.create_revision ||
        a.version != b.version || a.lease != b.lease) {
      std::abort();
    }
  }
  return 0;
}
