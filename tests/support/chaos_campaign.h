// What the fault campaigns (tests/chaos/) share: the seeds and the number of
// faults (RULEPLANE_CHAOS_SEEDS, RULEPLANE_CHAOS_FAULTS, else the fixed CI
// ones), a sequence's log (each line printed with the seed and the time since
// the sequence began, and kept in the sequence's chaos.log), and the loop
// that runs one sequence per seed and keeps a failed seed's files.
//
//   TEST(MyChaos, ...) {
//     Totals totals;  // with `sequences` and `failed_seeds`
//     RunChaosCampaign<Sequence>(kCiSeeds, kCiFaults, totals, "chaos.log, ...");
//     std::cout << Summary(totals) << std::endl;
//   }
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace ruleplane::testing {

// RULEPLANE_CHAOS_SEEDS (comma-separated), else `ci_seeds`.
inline std::vector<uint64_t> ChaosSeeds(const std::vector<uint64_t>& ci_seeds) {
  const char* text = std::getenv("RULEPLANE_CHAOS_SEEDS");
  if (text == nullptr || *text == '\0') return ci_seeds;
  std::vector<uint64_t> seeds;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');)
    if (!item.empty()) seeds.push_back(std::strtoull(item.c_str(), nullptr, 10));
  return seeds;
}

// RULEPLANE_CHAOS_FAULTS, else `ci_faults`.
inline int ChaosFaults(int ci_faults) {
  const char* text = std::getenv("RULEPLANE_CHAOS_FAULTS");
  return text != nullptr && *text != '\0' ? std::atoi(text) : ci_faults;
}

// One sequence's log: printed as "chaos: seed S [12.3 s]: line" and kept in a file.
class ChaosLog {
 public:
  ChaosLog(uint64_t seed, int faults) : seed_(seed), faults_(faults) {}

  void Open(const std::string& path) { file_.open(path); }
  std::ofstream& file() { return file_; }  // more for the file only (a process's output)

  void Note(const std::string& line) {
    const auto elapsed =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start_)
            .count();
    char at[32];
    std::snprintf(at, sizeof at, "%.1f s", static_cast<double>(elapsed) / 1000);
    std::cout << "chaos: seed " << seed_ << " [" << at << "]: " << line << std::endl;
    file_ << "[" << at << "] " << line << std::endl;
  }

  // A failed check, with how to reproduce it and where the files are.
  void Fail(const std::string& what, const std::string& files) {
    file_ << "FAILED: " << what << std::endl;
    ADD_FAILURE() << "seed " << seed_ << ": " << what << " (RULEPLANE_CHAOS_SEEDS=" << seed_
                  << " RULEPLANE_CHAOS_FAULTS=" << faults_ << " reproduces it; files in " << files << ")";
  }

 private:
  const uint64_t seed_;
  const int faults_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::ofstream file_;
};

// Failed assertions of the running test so far.
inline int FailedTestParts() {
  const ::testing::TestResult* result = ::testing::UnitTest::GetInstance()->current_test_info()->result();
  int failed = 0;
  for (int part = 0; part < result->total_part_count(); ++part)
    failed += result->GetTestPartResult(part).failed();
  return failed;
}

// One Sequence(seed, faults, totals).Run() per seed; a seed whose sequence
// failed goes to totals.failed_seeds and its files (`kept_files` says
// which) stay.
template <typename Sequence, typename Totals>
void RunChaosCampaign(const std::vector<uint64_t>& ci_seeds, int ci_faults, Totals& totals,
                      const std::string& kept_files) {
  const int faults = ChaosFaults(ci_faults);
  for (uint64_t seed : ChaosSeeds(ci_seeds)) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const int failed_before = FailedTestParts();
    Sequence sequence(seed, faults, totals);
    sequence.Run();
    ++totals.sequences;
    if (sequence.failed() || FailedTestParts() > failed_before) {
      if (std::find(totals.failed_seeds.begin(), totals.failed_seeds.end(), seed) ==
          totals.failed_seeds.end())
        totals.failed_seeds.push_back(seed);
      sequence.KeepFiles();
      std::cout << "chaos: seed " << seed << " failed; kept " << sequence.root() << " (" << kept_files << ")"
                << std::endl;
    }
  }
}

}  // namespace ruleplane::testing
