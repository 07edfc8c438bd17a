#include "tests/support/source_paths.h"

namespace ruleplane::testing {

const char* SourceDir() { return RULEPLANE_SOURCE_DIR; }
const char* RuleplaneBinary() { return RULEPLANE_BINARY; }

}  // namespace ruleplane::testing
