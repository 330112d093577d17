#pragma once

#include <memory>
#include <optional>
#include <string>

#include "timeline/timeline.hpp"

namespace pathbench {

// Captures CUPTI activity records (memcpy with memory kinds, memset, concurrent kernels,
// synchronisation, NVTX markers of the `pathbench` domain, unified-memory counters) between
// construction and collect(). One capture at a time per process. When CUPTI cannot be
// initialised (another profiler attached, no permission, no GPU, built without CUDA) the
// capture is inert and collect() returns a Timeline whose unavailable_reason says why: the run
// goes on without a timeline.
class TimelineCapture {
 public:
  struct Options {
    bool unified_memory_counters = false;  // configured after the CUDA context exists
  };
  explicit TimelineCapture(Options options);
  TimelineCapture(const TimelineCapture&) = delete;
  TimelineCapture& operator=(const TimelineCapture&) = delete;
  ~TimelineCapture();

  bool active() const { return reason_.empty(); }
  const std::string& unavailable_reason() const { return reason_; }
  // Flushes CUPTI's buffers, disables the activity kinds and returns what was recorded since
  // construction (or since the previous collect()).
  Timeline collect();

 private:
  Options options_;
  std::string reason_;
};

}  // namespace pathbench
