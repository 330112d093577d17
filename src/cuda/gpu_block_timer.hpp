#pragma once

#include <cuda_runtime_api.h>

#include <functional>

#include "cuda/cuda_resources.hpp"
#include "cuda/latch.hpp"

namespace pathbench {

// The one way pathbench times asynchronous GPU work: latch the stream, record a start event,
// enqueue the block, record a stop event, release the latch, wait. Warm-up is the caller's job.
class GpuBlockTimer {
 public:
  explicit GpuBlockTimer(double latch_timeout_seconds = 10.0);
  // Seconds between the events around whatever `enqueue` puts on `stream`. Throws CaseFailure
  // when the latch timed out (the host could not enqueue the block while the latch held it).
  double time_block(cudaStream_t stream, const std::function<void()>& enqueue);

 private:
  double latch_timeout_;
  Latch latch_;
  Event start_, stop_;
};

}  // namespace pathbench
