#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <string>

#include "cuda/cuda_resources.hpp"
#include "cuda/latch.hpp"

namespace pathbench {

// The one way pathbench times asynchronous GPU work: latch the stream, record a start event,
// enqueue the block, record a stop event, release the latch, wait. Warm-up is the caller's job.
//
// Some operations block the enqueueing thread until the stream reaches them (a graph launch of
// many copies, a kernel touching managed memory, large peer copies on some drivers); behind a
// latch that would deadlock. The first block is therefore latched with a short timeout: if the
// host could not finish enqueueing, the timer says so and from then on times blocks with the
// host's steady clock (enqueue + stream synchronisation) instead — the caller reports that
// method (host_timed()) rather than a number the latch could not vouch for.
class GpuBlockTimer {
 public:
  explicit GpuBlockTimer(double latch_timeout_seconds = 10.0,
                         double first_block_timeout_seconds = 1.0);
  // Seconds for whatever `enqueue` puts on `stream`. When the first block's enqueueing blocks,
  // that block is run again under the host clock (its work is done twice). Throws CaseFailure
  // when a later latched block times out.
  double time_block(cudaStream_t stream, const std::function<void()>& enqueue);

  bool host_timed() const { return host_timed_; }
  const std::string& host_timed_reason() const { return host_timed_reason_; }

 private:
  double host_time(cudaStream_t stream, const std::function<void()>& enqueue) const;

  double latch_timeout_;
  double first_block_timeout_;
  bool first_block_ = true;
  bool host_timed_ = false;
  std::string host_timed_reason_;
  Latch latch_;
  Event start_, stop_;
};

}  // namespace pathbench
