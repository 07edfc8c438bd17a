// A single-member etcd on 127.0.0.1, on a data directory of its own: the
// replay of incremental snapshots onto a restore, and the compaction of the
// backups (`ruleplane compact`). Nothing outside this process reaches it.
#pragma once

#include <cstdint>
#include <string>

#include "adapters/request.h"
#include "engine/common/error.h"
#include "platform/process.h"

namespace ruleplane {

struct LoopbackEtcd {
  ChildProcess process;    // not started in a dry run
  std::string client_url;  // "http://127.0.0.1:<port>"
  int64_t revision = 0;    // the data's revision once it answered (0 in a dry run)
};

// Starts etcd as member `name` on `data_dir`, its output appended to
// `log_path`, and waits until it answers. Its ports were free when chosen;
// when another process took one before etcd bound it, etcd exits saying so
// and starts again on new ports (a few times).
Result<LoopbackEtcd> StartLoopbackEtcd(const std::string& name, const std::string& data_dir,
                                       const std::string& log_path, RequestLog& log);

}  // namespace ruleplane
