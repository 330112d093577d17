#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "cuda/cuda_resources.hpp"

namespace pathbench {

// A stream and the device it belongs to (kernel launches and event records need that device
// current).
struct DeviceStream {
  int device = 0;
  cudaStream_t stream = nullptr;
};

// A kernel that holds a stream until the host releases it, so that a whole block of operations
// is enqueued before the first one starts and the events around the block time only the work.
// The kernel gives up after a timeout and says so: a host that could not finish enqueueing (a
// copy that blocked the calling thread) must fail the case, never hang it.
class Latch {
 public:
  Latch();
  // Launches the latch kernel on `stream` (on the current device); it spins until release() or
  // `timeout_seconds`.
  void hold(cudaStream_t stream, double timeout_seconds);
  // One latch kernel per stream, each launched on its stream's device; they all read the same
  // mapped flag, so one release() lets every stream go at once (copies to several GPUs that
  // really start together).
  void hold(const std::vector<DeviceStream>& streams, double timeout_seconds);
  void release();
  // Valid after the stream has passed the latch (after every stream, for several): true when any
  // of the kernels gave up.
  bool timed_out() const;

 private:
  void arm();
  void launch(cudaStream_t stream, int* device_flags, double timeout_seconds);

  // [0] release, [1] timed out; mapped into every device (portable; with unified addressing the
  // device pointer is the host pointer on all of them)
  PinnedHostMemory flags_;
  int* device_flags_ = nullptr;
};

}  // namespace pathbench
