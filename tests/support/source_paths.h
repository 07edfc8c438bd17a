#pragma once

#include <filesystem>

// Where the tests find the checkout (rule files, deploy/, examples/) and the
// ruleplane binary they run. Defined in source_paths.cpp alone, the one test
// object compiled with the checkout's absolute path: every other test object is
// the same in any clone, so the compiler cache serves it to the next clone.

namespace ruleplane::testing {

const char* SourceDir();
const char* RuleplaneBinary();

inline const std::filesystem::path kSourceDir{SourceDir()};

}  // namespace ruleplane::testing
