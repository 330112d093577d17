#include <atomic>

#include "cuda/latch.hpp"

namespace pathbench {

namespace {

__device__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void latch_kernel(volatile int* flags, unsigned long long timeout_ns) {
  const unsigned long long start = global_timer_ns();
  while (flags[0] == 0) {
    if (global_timer_ns() - start > timeout_ns) {
      flags[1] = 1;
      __threadfence_system();
      return;
    }
    __nanosleep(500);
  }
}

}  // namespace

Latch::Latch() : flags_(2 * sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable) {
  PB_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_flags_), flags_.get(), 0));
}

void Latch::arm() {
  auto* flags = reinterpret_cast<volatile int*>(flags_.get());
  flags[0] = 0;
  flags[1] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

void Latch::launch(cudaStream_t stream, int* device_flags, double timeout_seconds) {
  latch_kernel<<<1, 1, 0, stream>>>(device_flags,
                                    static_cast<unsigned long long>(timeout_seconds * 1e9));
  PB_CUDA(cudaGetLastError());
}

void Latch::hold(cudaStream_t stream, double timeout_seconds) {
  arm();
  launch(stream, device_flags_, timeout_seconds);
}

void Latch::hold(const std::vector<DeviceStream>& streams, double timeout_seconds) {
  arm();
  for (const auto& s : streams) {
    DeviceScope scope(s.device);
    // The flags' address as this device sees it (the host address under unified addressing).
    int* device_flags = nullptr;
    PB_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_flags), flags_.get(), 0));
    launch(s.stream, device_flags, timeout_seconds);
  }
}

void Latch::release() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  reinterpret_cast<volatile int*>(flags_.get())[0] = 1;
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

bool Latch::timed_out() const { return reinterpret_cast<volatile int*>(flags_.get())[1] != 0; }

}  // namespace pathbench
