// Failure points, in the spirit of etcd's gofail: a named place in the acting
// code where a test can make the process die at once, as a crash or a kill
// would, to check that a rerun converges.
//
//   RULEPLANE_FAILPOINT=after:AddMember ruleplane member-init ...
//
// The process exits with status 75 and without unwinding, flushing or
// closing anything (_exit), right after the named point is reached.
// "<point>=hang" stops the calling thread there for good instead, as a
// process the scheduler no longer runs (its other threads go on), until the
// process is killed: a test can then kill it from outside, as a deleted Pod's
// container is. RULEPLANE_FAILPOINT may name several points, separated by commas.
#pragma once

#include <string_view>

namespace ruleplane {

inline constexpr int kFailPointExitCode = 75;

// Exits the process (or hangs) when RULEPLANE_FAILPOINT names `point`.
void FailPoint(std::string_view point);

}  // namespace ruleplane
