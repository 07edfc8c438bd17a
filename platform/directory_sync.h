// fsync of a directory: what makes a rename in it durable (a crash after the
// rename and before this may leave the old name).
#pragma once

#include <string>

#include "engine/common/error.h"

namespace ruleplane {

// kIo naming the directory when it cannot be opened or synced; "" is ".".
Status SyncDirectory(const std::string& path);

}  // namespace ruleplane
