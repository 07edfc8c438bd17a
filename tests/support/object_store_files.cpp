#include "tests/support/object_store_files.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string_view>

#include "platform/sha256_stream.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {
namespace {

constexpr int64_t kMiB = 1 << 20;

}  // namespace

void WritePatternFile(const std::string& path, int64_t size, uint32_t seed) {
  std::ofstream out(path, std::ios::binary);
  std::string block(static_cast<size_t>(std::min<int64_t>(size, kMiB)), '\0');
  uint32_t state = seed * 2654435761u + 1;
  for (int64_t done = 0; done < size;) {
    const size_t now = static_cast<size_t>(std::min<int64_t>(size - done, kMiB));
    for (size_t i = 0; i < now; ++i) {
      state = state * 1664525u + 1013904223u;
      block[i] = static_cast<char>(state >> 24);
    }
    out.write(block.data(), static_cast<std::streamsize>(now));
    done += static_cast<int64_t>(now);
  }
}

std::string FileSha256Hex(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Sha256Stream hash;
  std::string block(kMiB, '\0');
  while (in.read(block.data(), static_cast<std::streamsize>(block.size())) || in.gcount() > 0)
    hash.Update(std::string_view(block.data(), static_cast<size_t>(in.gcount())));
  std::string hex;
  for (unsigned char byte : hash.Finish()) {
    char two[3];
    std::snprintf(two, sizeof two, "%02x", byte);
    hex += two;
  }
  return hex;
}

int64_t ProcStatusBytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind(field + ":", 0) == 0) return std::atoll(line.c_str() + field.size() + 1) * 1024;
  return -1;
}

bool ResetPeakRss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  return static_cast<bool>(clear);
}

std::string PythonWithBoto3() {
  for (const std::string python : {"python3", "/usr/bin/python3"})
    if (RunShell(python + " -c 'import boto3' 2>/dev/null").exit_code == 0) return python;
  return "";
}

}  // namespace ruleplane::testing
