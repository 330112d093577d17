#include "timeline/unified_memory_counters.hpp"

#include <utility>

#include "timeline/cupti_timeline.hpp"

namespace pathbench {

UnifiedMemoryCounts unified_memory_counts(const Timeline& timeline) {
  const TimelineAnalysis a = analyze_timeline(timeline);
  UnifiedMemoryCounts c;
  c.gpu_fault_groups = a.unified_memory_fault_groups;
  c.bytes_h2d = a.unified_memory_bytes_h2d;
  c.bytes_d2h = a.unified_memory_bytes_d2h;
  c.bytes_d2d = a.unified_memory_bytes_d2d;
  for (const auto& r : timeline.records) {
    if (r.kind == ActivityKind::kUnifiedMemory && r.name == "cpu_page_fault_count") {
      c.cpu_faults += r.value;
    }
  }
  c.lost_records = timeline.dropped_records;
  return c;
}

UnifiedMemoryCounter::UnifiedMemoryCounter(bool device_to_device)
    : device_to_device_(device_to_device), unavailable_(prepare_cupti_tracing()) {}

std::optional<UnifiedMemoryCounts> UnifiedMemoryCounter::count(const std::function<void()>& work) {
  TimelineCapture::Options options;
  options.unified_memory_counters = true;
  options.unified_memory_device_to_device = device_to_device_;
  TimelineCapture capture(options);
  work();
  Timeline timeline = capture.collect();
  if (!capture.active() || !timeline.unavailable_reason.empty()) {
    unavailable_ = capture.unavailable_reason().empty() ? timeline.unavailable_reason
                                                        : capture.unavailable_reason();
    return std::nullopt;
  }
  const UnifiedMemoryCounts counts = unified_memory_counts(timeline);
  last_ = std::move(timeline);
  return counts;
}

}  // namespace pathbench
