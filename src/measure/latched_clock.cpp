#include "measure/latched_clock.hpp"

#include "cuda/cuda_resources.hpp"

namespace pathbench {

LatchedClock::LatchedClock(cudaStream_t stream)
    : streams_{DeviceStream{current_device(), stream}} {}

LatchedClock::LatchedClock(std::vector<DeviceStream> streams) : streams_(std::move(streams)) {}

std::vector<double> LatchedClock::time(const Enqueue& enqueue) {
  return timer_.time_blocks(streams_, enqueue);
}

TimingMethod LatchedClock::method() const {
  return timer_.host_timed() ? TimingMethod::kHostSteadyClock : TimingMethod::kCudaEventsLatched;
}

std::string LatchedClock::describe() const {
  if (timer_.host_timed()) return timer_.host_timed_reason();
  return streams_.size() == 1
             ? std::string("CUDA events around each block, held by a latch kernel until enqueued")
             : "CUDA events on each of " + std::to_string(streams_.size()) +
                   " streams around each block, every stream held by a latch kernel and all "
                   "released together";
}

}  // namespace pathbench
