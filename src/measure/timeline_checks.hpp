#pragma once

// What a CUPTI timeline of one sample proves about a copy case: the host memory kind the driver
// saw on every H2D copy, and the number of copies the sample issued.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "result/vocabulary.hpp"
#include "timeline/timeline.hpp"

namespace pathbench {

struct TimelineCopyExpectation {
  std::optional<std::string> host_kind;  // H2D: the kind every copy must read ("pinned", ...)
  std::uint64_t copies = 0;              // copy records one sample must show
  bool at_least = false;  // the driver may split a copy into several records (pageable staging)
  std::string issued = "copies issued in one sample";  // how `copies` came about, in words
};

// "timeline_complete": CUPTI dropped no record of the timeline.
Check timeline_complete_check(const Timeline& timeline);

// For a case whose metrics come from a CUPTI timeline: throws SkipCase, saying why, when CUPTI
// cannot capture one here (no GPU, another profiler attached, no permission). `who` names the
// case's kind: "the overlap family", "a serving case with gpu_timeline on".
void require_cupti_timeline(std::string_view who);

// "timeline_memory_kind" (with a host_kind) and "timeline_copies".
std::vector<Check> timeline_copy_checks(const TimelineAnalysis& a,
                                        const TimelineCopyExpectation& expected);

// "copies_hidden_by_reads": how much of the copy time ran while reads were in flight (a
// RangeCopyOverlap of the reads' NVTX ranges), and how much after the last read. Informative: it
// passes either way (copies slower than the reads are a finding, not a broken measurement) and
// says which it was; without read ranges in the timeline (NVTX did not reach CUPTI) it says the
// overlap cannot be read from it.
Check copies_hidden_check(const RangeCopyOverlap& o);

}  // namespace pathbench
