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
    const std::string_view entry = names.substr(start, end - start);
    const bool hang = entry == std::string(point) + "=hang";
    if (entry == point || hang) {
      const std::string line = "ruleplane: failure point " + std::string(point) + " reached, " +
                               (hang ? "hanging\n" : "exiting\n");
      (void)!write(STDERR_FILENO, line.data(), line.size());
      if (!hang) _exit(kFailPointExitCode);
      for (;;) pause();
    }
    start = end + 1;
  }
}

}  // namespace ruleplane
