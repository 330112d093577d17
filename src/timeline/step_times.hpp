#pragma once

// What the GPU itself did for each step of a request stream, read off a CUPTI timeline whose
// streams each carry their requests in order: a request's input copies (H2D), then its step (one
// kernel), then anything else (a D2H response). Records carry no request id; the kernel that ends
// a request on its stream delimits it, so nothing inside the timed operations marks them.

#include <cstddef>
#include <vector>

#include "timeline/timeline.hpp"

namespace pathbench {

struct StepTimes {
  std::size_t steps = 0;  // kernel records
  // Per step with at least one H2D copy on its stream since the stream's previous kernel (or the
  // capture's start): the first such copy's start to the last one's end, seconds. Chunked or
  // driver-staged inputs are several records; a step without input has no entry.
  std::vector<double> input_copy_seconds;
  // Per step after the first of its device, in start order: how long the device ran no kernel
  // before it, max(0, its start - the latest end of the kernels that started before it), seconds:
  // the compute the data path left idle.
  std::vector<double> gap_seconds;
};

StepTimes step_times(const Timeline& timeline);

}  // namespace pathbench
