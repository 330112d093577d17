#include "measure/timeline_checks.hpp"

#include "core/errors.hpp"
#include "core/text.hpp"
#include "timeline/cupti_timeline.hpp"

namespace pathbench {

Check timeline_complete_check(const Timeline& timeline) {
  const bool complete = timeline.dropped_records == 0;
  return {"timeline_complete", complete,
          complete ? std::string("CUPTI dropped no records")
                   : concat("CUPTI dropped ", std::to_string(timeline.dropped_records),
                            " records: the timeline is incomplete"),
          timeline.dropped_records};
}

void require_cupti_timeline(std::string_view who) {
  TimelineCapture probe(TimelineCapture::Options{});
  if (!probe.active()) {
    throw SkipCase(concat(who, " needs a CUPTI timeline: ", probe.unavailable_reason()));
  }
  probe.collect();
}

std::vector<Check> timeline_copy_checks(const TimelineAnalysis& a,
                                        const TimelineCopyExpectation& expected) {
  std::vector<Check> out;
  if (const auto& wanted = expected.host_kind) {
    std::size_t copies = 0;
    for (const auto& [kind, n] : a.copies_by_source_kind) copies += n;
    const auto it = a.copies_by_source_kind.find(*wanted);
    const std::size_t as_requested = it == a.copies_by_source_kind.end() ? 0 : it->second;
    out.push_back({"timeline_memory_kind", copies > 0 && as_requested == copies,
                   std::to_string(as_requested) + " of " + std::to_string(copies) +
                       " copies on the timeline read " + *wanted + " host memory",
                   *wanted});
  }
  const bool count_ok =
      expected.at_least ? a.copies >= expected.copies : a.copies == expected.copies;
  out.push_back({"timeline_copies", count_ok,
                 std::to_string(a.copies) + " copy records for " + std::to_string(expected.copies) +
                     " " + expected.issued,
                 a.copies});
  return out;
}

}  // namespace pathbench
