#include "platform/failure_point.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace ruleplane {

void FailPoint(std::string_view point) {
  const char* configured = std::getenv("RULEPLANE_FAILPOINT");
  if (configured == nullptr) return;
  const std::string_view names(configured);
  size_t start = 0;
  while (start <= names.size()) {
    size_t end = names.find(',', start);
    if (end == std::string_view::npos) end = names.size();
    if (names.substr(start, end - start) == point) {
      const std::string line = "ruleplane: failure point " + std::string(point) + " reached, exiting\n";
      (void)!write(STDERR_FILENO, line.data(), line.size());
      _exit(kFailPointExitCode);
    }
    start = end + 1;
  }
}

}  // namespace ruleplane
