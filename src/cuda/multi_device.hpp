#pragma once

// Work spread over several GPUs: objects that belong to a device (memory, streams, events, all
// created on the device current at the time), and ordering between streams of different GPUs (an
// event is recorded on a stream of its own device and waited for by a stream of any device).

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "cuda/cuda_resources.hpp"
#include "cuda/latch.hpp"

namespace pathbench {

// A T constructed with `device` current; the caller's device is current again afterwards.
template <typename T, typename... Args>
T on_device(int device, Args&&... args) {
  DeviceScope scope(device);
  return T(std::forward<Args>(args)...);
}

// A buffer on one GPU and a stream of that GPU, both created there.
struct GpuBuffer {
  GpuBuffer(int gpu, std::size_t bytes)
      : device(gpu), memory(on_device<DeviceMemory>(gpu, bytes)), stream(on_device<Stream>(gpu)) {}
  DeviceStream on() const { return {device, stream.get()}; }

  int device;
  DeviceMemory memory;
  Stream stream;
};

// The ordering calls make the device they need current and leave it so: no save and restore in
// an enqueue loop that a host clock may be timing.

// `event` (of `on.device`) marks everything enqueued on `on` so far.
inline void record_event(const Event& event, const DeviceStream& on) {
  PB_CUDA(cudaSetDevice(on.device));
  PB_CUDA(cudaEventRecord(event.get(), on.stream));
}

// Work enqueued on `waiter` from now on starts after `event`.
inline void wait_event(const DeviceStream& waiter, const Event& event) {
  PB_CUDA(cudaSetDevice(waiter.device));
  PB_CUDA(cudaStreamWaitEvent(waiter.stream, event.get(), 0));
}

// `waiter` goes on only after everything enqueued on `from` so far, through `event`.
inline void hand_off(const DeviceStream& from, const Event& event, const DeviceStream& waiter) {
  record_event(event, from);
  wait_event(waiter, event);
}

}  // namespace pathbench
