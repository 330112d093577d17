#pragma once

// What each sample of a transparent-huge-page fault case started from and how its faults fared.
// With THP defrag=madvise a MADV_HUGEPAGE fault that finds no free 2 MiB block compacts memory in
// the fault path, inside the timed region, so the cost per GiB follows how fragmented free memory
// happened to be (two-humped between runs). Before each sample memory is compacted where this
// process may (placement/memory_compaction.hpp); each sample records whether it was, the free
// memory in THP-sized blocks it started with, and how many of its faults fell back to 4 KiB pages.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "inventory/vmstat.hpp"
#include "placement/memory_compaction.hpp"
#include "result/vocabulary.hpp"

namespace pathbench {

class ThpFaultConditions {
 public:
  // `node`: the NUMA node the buffer is bound to (only its free blocks count), else every node.
  // `huge_pages_per_sample`: the THPs one sample's buffer takes, which the checks count against.
  ThpFaultConditions(std::optional<int> node, std::uint64_t huge_pages_per_sample,
                     std::filesystem::path root = "/");

  struct Start {
    CompactionOutcome compaction;
    std::optional<std::uint64_t> free_thp_block_bytes;  // empty when /proc/buddyinfo is hidden
    std::optional<VmCounters> vmstat;                   // empty when /proc/vmstat is hidden
  };

  // Outside the timed region, right before the sample's faults: compacts memory when this process
  // may, then reads the free THP-sized blocks and the fault counters. Never throws.
  Start before_sample() const;
  // Right after the sample's faults: records the sample (warm-up cycles are not recorded).
  void after_sample(const Start& start);

  // "memory_compaction" and "thp_fault_fallback", over the recorded samples; both pass (they say
  // what the samples ran under; huge_backing judges the backing). None before the first sample.
  std::vector<Check> checks() const;

 private:
  struct SampleRecord {
    CompactionOutcome compaction;
    std::optional<std::uint64_t> free_thp_block_bytes;
    std::optional<std::uint64_t> fallbacks, huge_faults;  // empty when not counted
  };

  Check compaction_check() const;
  Check fallback_check() const;

  std::optional<int> node_;
  std::uint64_t huge_pages_per_sample_;
  std::filesystem::path root_;
  std::vector<SampleRecord> samples_;
};

}  // namespace pathbench
