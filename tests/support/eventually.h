// Waiting and reading in tests: poll until a condition holds; a whole file
// as text (a process's log in a failure message).
#pragma once

#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>

namespace ruleplane::testing {

// Until `done` holds or `timeout` passes; polls every `period`.
inline bool Eventually(const std::function<bool()>& done, std::chrono::seconds timeout,
                       std::chrono::milliseconds period = std::chrono::milliseconds(200)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(period);
  }
  return done();
}

// The file's bytes; "" when it cannot be read.
inline std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace ruleplane::testing
