// TimelineCapture for builds without CUDA: always inert, saying why.
#include "timeline/cupti_library.hpp"
#include "timeline/cupti_timeline.hpp"

namespace pathbench {

std::string prepare_cupti_tracing() {
  return "pathbench was built without CUDA: no CUPTI timeline";
}

TimelineCapture::TimelineCapture(Options options) : options_(options) {
  reason_ = "pathbench was built without CUDA: no CUPTI timeline";
}

TimelineCapture::~TimelineCapture() = default;

Timeline TimelineCapture::collect() {
  Timeline timeline;
  timeline.unavailable_reason = reason_;
  return timeline;
}

std::string cupti_library_path() { return {}; }

}  // namespace pathbench
