#include "measure/timeline_checks.hpp"

#include "core/errors.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
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

Check copies_hidden_check(const RangeCopyOverlap& o) {
  Check c{"copies_hidden_by_reads", true, "", nlohmann::ordered_json::object()};
  c.value["read_ranges"] = o.ranges;
  c.value["copies"] = o.copies;
  c.value["read_seconds"] = o.range_seconds;
  c.value["copy_seconds"] = o.copy_seconds;
  c.value["copy_during_reads_seconds"] = o.copy_during_ranges_seconds;
  c.value["copy_after_last_read_seconds"] = o.copy_after_last_range_seconds;
  c.value["hidden_fraction"] = o.hidden_fraction;
  if (o.ranges == 0 || o.copies == 0) {
    c.detail = concat("the timeline has ", std::to_string(o.ranges), " read ranges and ",
                      std::to_string(o.copies),
                      " copies: the overlap cannot be read from it (read ranges need NVTX to "
                      "reach CUPTI)");
    return c;
  }
  const double percent = 100.0 * o.hidden_fraction;
  c.detail =
      concat(format_seconds(o.copy_during_ranges_seconds), " of ", format_seconds(o.copy_seconds),
             " of copies (", format_value(percent, "%"), ") ran while reads were in flight; ",
             format_seconds(o.copy_after_last_range_seconds), " came after the last read (",
             std::to_string(o.ranges), " reads, ", std::to_string(o.copies), " copies)");
  return c;
}

}  // namespace pathbench
