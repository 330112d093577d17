#include "cuda/gpu_block_timer.hpp"

#include <algorithm>
#include <string>

#include "core/errors.hpp"
#include "core/host_clock.hpp"

namespace pathbench {

GpuBlockTimer::GpuBlockTimer(double latch_timeout_seconds, double first_block_timeout_seconds)
    : latch_timeout_(latch_timeout_seconds),
      first_block_timeout_(std::min(first_block_timeout_seconds, latch_timeout_seconds)) {
  PB_CUDA(cudaGetDevice(&device_));
  events_.push_back(EventPair{device_, Event(), Event()});
}

void GpuBlockTimer::prepare_events(const std::vector<DeviceStream>& streams) {
  for (std::size_t i = 0; i < streams.size(); ++i) {
    if (i < events_.size() && events_[i].device == streams[i].device) continue;
    DeviceScope scope(streams[i].device);
    EventPair pair{streams[i].device, Event(), Event()};
    if (i < events_.size()) {
      events_[i] = std::move(pair);
    } else {
      events_.push_back(std::move(pair));
    }
  }
}

double GpuBlockTimer::host_time(const std::vector<DeviceStream>& streams,
                                const std::function<void()>& enqueue) const {
  return time_on_host([&] {
    enqueue();
    for (const auto& s : streams) PB_CUDA(cudaStreamSynchronize(s.stream));
  });
}

double GpuBlockTimer::time_block(cudaStream_t stream, const std::function<void()>& enqueue) {
  return time_blocks({DeviceStream{device_, stream}}, enqueue).front();
}

std::vector<double> GpuBlockTimer::time_blocks(const std::vector<DeviceStream>& streams,
                                               const std::function<void()>& enqueue) {
  if (streams.empty()) return {};
  if (host_timed_) return std::vector<double>(streams.size(), host_time(streams, enqueue));
  const bool probing = first_block_;
  first_block_ = false;
  const double timeout = probing ? first_block_timeout_ : latch_timeout_;
  prepare_events(streams);

  // Let every stream drain before the buffers it uses are freed by unwinding.
  auto drain = [&] {
    latch_.release();
    for (const auto& s : streams) cudaStreamSynchronize(s.stream);
  };
  try {
    latch_.hold(streams, timeout);
    for (std::size_t i = 0; i < streams.size(); ++i) {
      DeviceScope scope(streams[i].device);
      PB_CUDA(cudaEventRecord(events_[i].start.get(), streams[i].stream));
    }
    {
      // The caller's enqueue may switch devices; the timer's own calls see the device it found.
      int current = 0;
      PB_CUDA(cudaGetDevice(&current));
      DeviceScope restore(current);
      enqueue();
    }
    for (std::size_t i = 0; i < streams.size(); ++i) {
      DeviceScope scope(streams[i].device);
      PB_CUDA(cudaEventRecord(events_[i].stop.get(), streams[i].stream));
    }
  } catch (...) {
    drain();
    throw;
  }
  latch_.release();
  for (std::size_t i = 0; i < streams.size(); ++i) {
    PB_CUDA(cudaEventSynchronize(events_[i].stop.get()));
  }
  if (latch_.timed_out()) {
    const std::string what = "enqueueing the block did not finish within " +
                             std::to_string(timeout) +
                             " s while the latch held the stream: an operation blocked the "
                             "calling thread";
    if (!probing) throw CaseFailure("latch timed out: " + what + "; the timing is not valid");
    host_timed_ = true;
    host_timed_reason_ = what + "; timed by the host clock (enqueue + synchronise) instead";
    return std::vector<double>(streams.size(), host_time(streams, enqueue));
  }
  std::vector<double> seconds(streams.size());
  for (std::size_t i = 0; i < streams.size(); ++i) {
    float ms = 0;
    PB_CUDA(cudaEventElapsedTime(&ms, events_[i].start.get(), events_[i].stop.get()));
    seconds[i] = ms * 1e-3;
  }
  return seconds;
}

}  // namespace pathbench
