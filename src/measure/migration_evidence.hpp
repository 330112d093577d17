#pragma once

// CUPTI's unified-memory counts of some work, judged against what the work must have migrated.
// CUPTI can lose unified-memory records without reporting the loss: on the H200 (driver 580,
// CUDA 13.0) a GPU touch at 64 KiB stride over 1 GiB counted 0.3-0.5 GB migrated and no GPU
// page-fault group, and dense 4 KiB passes counted 77-97 % of the buffer. So the counts are
// evidence with their gaps named, and a metric divides by no less than the work must have moved.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "result/vocabulary.hpp"
#include "timeline/unified_memory_counters.hpp"

namespace pathbench {

struct MigrationExpectation {
  bool to_host = false;  // the work migrates pages back to the host, else to the GPU
  // The pages start on another GPU: counted as device-to-device bytes (CUPTI's
  // BYTES_TRANSFER_DTOD), with the GPU page-fault groups of the GPU that touches them.
  bool between_gpus = false;
  std::uint64_t least_bytes = 0;  // the least it moves (e.g. the pages of the addresses it touches)
  std::string least_what;         // those bytes in words: "the page of every touched address"
  bool must_migrate = true;       // false: it may map pages instead, so fewer bytes is no gap
  bool by_faults = false;  // only page faults migrate: bytes without a counted fault lost records
};

// Each contradiction between the counts and the expectation, one sentence; none: nothing
// contradicts them (they may still be lower bounds).
std::vector<std::string> migration_gaps(const MigrationExpectation& e,
                                        const UnifiedMemoryCounts& counts);
// The counted bytes in the expected direction, never less than least_bytes.
std::uint64_t migrated_bytes(const MigrationExpectation& e, const UnifiedMemoryCounts& counts);

struct CountedSample {
  double seconds = 0;
  std::optional<UnifiedMemoryCounts> counts;  // none: CUPTI could not count this sample
};
// "um_counters", always passed (counts are evidence, the family's own checks judge them): the
// counts of every sample (device-to-device bytes too when the expectation is between GPUs), the
// median time per fault group of the samples that lost nothing, the samples whose metrics used
// least_bytes, those without counters (`unavailable` says why) and those that lost records
// (INCOMPLETE). The value holds the series per counter.
Check unified_memory_counter_check(const MigrationExpectation& e,
                                   const std::vector<CountedSample>& samples,
                                   const std::string& unavailable);

}  // namespace pathbench
