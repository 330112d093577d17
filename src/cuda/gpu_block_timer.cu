#include "cuda/gpu_block_timer.hpp"

#include <string>

#include "core/errors.hpp"
#include "measure/host_clock.hpp"

namespace pathbench {

GpuBlockTimer::GpuBlockTimer(double latch_timeout_seconds, double first_block_timeout_seconds)
    : latch_timeout_(latch_timeout_seconds),
      first_block_timeout_(std::min(first_block_timeout_seconds, latch_timeout_seconds)) {}

double GpuBlockTimer::host_time(cudaStream_t stream, const std::function<void()>& enqueue) const {
  return time_on_host([&] {
    enqueue();
    PB_CUDA(cudaStreamSynchronize(stream));
  });
}

double GpuBlockTimer::time_block(cudaStream_t stream, const std::function<void()>& enqueue) {
  if (host_timed_) return host_time(stream, enqueue);
  const bool probing = first_block_;
  first_block_ = false;
  const double timeout = probing ? first_block_timeout_ : latch_timeout_;
  latch_.hold(stream, timeout);
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
    const std::string what = "enqueueing the block did not finish within " +
                             std::to_string(timeout) +
                             " s while the latch held the stream: an operation blocked the "
                             "calling thread";
    if (!probing) throw CaseFailure("latch timed out: " + what + "; the timing is not valid");
    host_timed_ = true;
    host_timed_reason_ = what + "; timed by the host clock (enqueue + synchronise) instead";
    return host_time(stream, enqueue);
  }
  float ms = 0;
  PB_CUDA(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
  return ms * 1e-3;
}

}  // namespace pathbench
