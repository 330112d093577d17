#include "timeline/step_times.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace pathbench {

namespace {

constexpr double kNs = 1e-9;

bool gpu_work(const TimelineRecord& r) {
  return r.kind == ActivityKind::kMemcpy || r.kind == ActivityKind::kKernel;
}

std::vector<const TimelineRecord*> by_start(std::vector<const TimelineRecord*> records) {
  std::stable_sort(records.begin(), records.end(), [](const auto* a, const auto* b) {
    return a->start_ns != b->start_ns ? a->start_ns < b->start_ns : a->end_ns < b->end_ns;
  });
  return records;
}

}  // namespace

StepTimes step_times(const Timeline& timeline) {
  StepTimes out;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<const TimelineRecord*>> streams;
  std::map<std::uint32_t, std::vector<const TimelineRecord*>> kernels;
  for (const auto& r : timeline.records) {
    if (!gpu_work(r)) continue;
    streams[{r.device, r.stream}].push_back(&r);
    if (r.kind == ActivityKind::kKernel) kernels[r.device].push_back(&r);
  }
  for (auto& [key, records] : streams) {
    bool open = false;
    std::uint64_t first = 0, last = 0;
    for (const TimelineRecord* r : by_start(std::move(records))) {
      if (r->kind == ActivityKind::kKernel) {
        ++out.steps;
        if (open) out.input_copy_seconds.push_back(static_cast<double>(last - first) * kNs);
        open = false;
      } else if (r->copy_kind == "HtoD") {
        first = open ? std::min(first, r->start_ns) : r->start_ns;
        last = open ? std::max(last, r->end_ns) : r->end_ns;
        open = true;
      }
    }
  }
  for (auto& [device, list] : kernels) {
    bool any = false;
    std::uint64_t latest_end = 0;
    for (const TimelineRecord* k : by_start(std::move(list))) {
      if (any) {
        out.gap_seconds.push_back(
            k->start_ns > latest_end ? static_cast<double>(k->start_ns - latest_end) * kNs : 0.0);
      }
      latest_end = any ? std::max(latest_end, k->end_ns) : k->end_ns;
      any = true;
    }
  }
  return out;
}

}  // namespace pathbench
