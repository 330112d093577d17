#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <string>
#include <vector>

#include "cuda/cuda_resources.hpp"
#include "cuda/latch.hpp"

namespace pathbench {

// The one way pathbench times asynchronous GPU work: latch the stream, record a start event,
// enqueue the block, record a stop event, release the latch, wait. Warm-up is the caller's job.
//
// Some operations block the enqueueing thread until the stream reaches them (a graph launch of
// many copies, large peer copies on some drivers, the first launch of a kernel CUDA has not
// loaded yet: see cuda/kernel_loading.hpp); behind a latch that would deadlock. The first block is
// therefore latched with a short timeout: if the host could not finish enqueueing, the timer says
// so and from then on times blocks with the host's steady clock (enqueue + stream synchronisation)
// instead — the caller reports that method (host_timed()) rather than a number the latch could not
// vouch for.
//
// A block can span several streams, each on its own GPU (copies to every GPU at once): one latch
// kernel holds each stream, one release lets all of them go together, and each stream is timed
// by its own pair of events on its own device (events of different devices cannot be compared).
class GpuBlockTimer {
 public:
  // The events of the single-stream form are created on the device current at construction.
  explicit GpuBlockTimer(double latch_timeout_seconds = 10.0,
                         double first_block_timeout_seconds = 1.0);
  // Seconds for whatever `enqueue` puts on `stream` (a stream of the construction device). When
  // the first block's enqueueing blocks, that block is run again under the host clock (its work
  // is done twice). Throws CaseFailure when a later latched block times out.
  double time_block(cudaStream_t stream, const std::function<void()>& enqueue);

  // The same for a block over several streams, released together. `enqueue` puts the work on all
  // of them (making each stream's device current as it needs; the timer restores the current
  // device around its own calls). Returns, per stream in order, the seconds from its start event
  // (just after its latch let go) to its stop event. Host-timed (see above), every entry is the
  // host time of the whole block (enqueue + synchronising every stream).
  std::vector<double> time_blocks(const std::vector<DeviceStream>& streams,
                                  const std::function<void()>& enqueue);

  bool host_timed() const { return host_timed_; }
  const std::string& host_timed_reason() const { return host_timed_reason_; }

 private:
  struct EventPair {
    int device = 0;
    Event start, stop;
  };
  double host_time(const std::vector<DeviceStream>& streams,
                   const std::function<void()>& enqueue) const;
  // events_[i] lives on streams[i].device (recreated when a stream's device differs).
  void prepare_events(const std::vector<DeviceStream>& streams);

  double latch_timeout_;
  double first_block_timeout_;
  bool first_block_ = true;
  bool host_timed_ = false;
  std::string host_timed_reason_;
  int device_ = 0;  // current at construction: the single-stream form's device
  Latch latch_;
  std::vector<EventPair> events_;
};

}  // namespace pathbench
