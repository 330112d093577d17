#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "cuda/cuda_resources.hpp"
#include "cuda/gpu_block_timer.hpp"
#include "measure/operation_clock.hpp"

namespace pathbench {

// CUDA events around a block that a latch kernel holds back until all of it is enqueued, on one
// stream or on several (one per GPU, released together); the first block is the latch probe and,
// when enqueueing blocked behind the latch, the clock times every block with the host clock
// instead and says why (GpuBlockTimer). Create it with the first stream's device current.
class LatchedClock final : public OperationClock {
 public:
  explicit LatchedClock(cudaStream_t stream);
  explicit LatchedClock(std::vector<DeviceStream> streams);
  std::vector<double> time(const Enqueue& enqueue) override;
  TimingMethod method() const override;
  std::string describe() const override;

 private:
  std::vector<DeviceStream> streams_;
  GpuBlockTimer timer_;
};

}  // namespace pathbench
