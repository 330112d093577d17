#include "cuda/gpu_block_timer.hpp"

#include <string>

#include "core/errors.hpp"

namespace pathbench {

GpuBlockTimer::GpuBlockTimer(double latch_timeout_seconds)
    : latch_timeout_(latch_timeout_seconds) {}

double GpuBlockTimer::time_block(cudaStream_t stream, const std::function<void()>& enqueue) {
  latch_.hold(stream, latch_timeout_);
  PB_CUDA(cudaEventRecord(start_.get(), stream));
  try {
    enqueue();
  } catch (...) {
    // Let the stream drain before the buffers it uses are freed by unwinding.
    latch_.release();
    cudaStreamSynchronize(stream);
    throw;
  }
  PB_CUDA(cudaEventRecord(stop_.get(), stream));
  latch_.release();
  PB_CUDA(cudaEventSynchronize(stop_.get()));
  if (latch_.timed_out()) {
    throw CaseFailure("latch timed out after " + std::to_string(latch_timeout_) +
                      " s: enqueueing the block did not finish while the latch held the stream "
                      "(an operation blocked the calling thread); the timing is not valid");
  }
  float ms = 0;
  PB_CUDA(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
  return ms * 1e-3;
}

}  // namespace pathbench
