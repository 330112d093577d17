#pragma once

#include <cuda_runtime_api.h>

#include "cuda/cuda_resources.hpp"

namespace pathbench {

// A kernel that holds a stream until the host releases it, so that a whole block of operations
// is enqueued before the first one starts and the events around the block time only the work.
// The kernel gives up after a timeout and says so: a host that could not finish enqueueing (a
// copy that blocked the calling thread) must fail the case, never hang it.
class Latch {
 public:
  Latch();
  // Launches the latch kernel on `stream`; it spins until release() or `timeout_seconds`.
  void hold(cudaStream_t stream, double timeout_seconds);
  void release();
  // Valid after the stream has passed the latch.
  bool timed_out() const;

 private:
  PinnedHostMemory flags_;  // [0] release, [1] timed out; mapped into the device
  int* device_flags_ = nullptr;
};

}  // namespace pathbench
