// What the object-store tests (S3Client, AzureBlobClient, the stores) share:
// large files of bytes that differ from one offset to the next, their
// SHA-256, and the process's resident set, to see that an upload or a read
// holds no part or block in memory.
//
//   WritePatternFile(path, 17 * kMiB, 7);
//   ASSERT_TRUE(ResetPeakRss());
//   const int64_t before = ProcStatusBytes("VmRSS");
//   ... upload ...
//   EXPECT_TRUE(!kRssIsMeaningful || ProcStatusBytes("VmHWM") - before < 4 * kMiB);
#pragma once

#include <cstdint>
#include <string>

namespace ruleplane::testing {

// `size` bytes that differ from one offset to the next (a pattern that
// repeats would hide a part or block sent twice or out of order), from
// `seed`, written 1 MiB at a time.
void WritePatternFile(const std::string& path, int64_t size, uint32_t seed);

// The SHA-256 of the file's bytes, in lower-case hex ("" hashes as empty).
std::string FileSha256Hex(const std::string& path);

// A field of /proc/self/status in bytes: the resident set ("VmRSS") or its
// peak ("VmHWM"); -1 when absent.
int64_t ProcStatusBytes(const std::string& field);

// Resets VmHWM to the current RSS (Linux 4.0 and later); false when it cannot.
bool ResetPeakRss();

// The python3 that has boto3 (the independent S3 client the tests check
// ruleplane against): the one on PATH, or Debian's, where python3-boto3
// installs it; "" when neither has it.
std::string PythonWithBoto3();

// AddressSanitizer keeps freed memory in quarantine and maps shadow memory:
// under it the resident set says nothing about what the client holds.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kRssIsMeaningful = false;
#else
inline constexpr bool kRssIsMeaningful = true;
#endif

}  // namespace ruleplane::testing
