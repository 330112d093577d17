#pragma once

#include <cuda_runtime_api.h>

#include "cuda/cuda_check.hpp"

namespace pathbench {

// CUDA loads a kernel at its first launch (lazy loading, CUDA_MODULE_LOADING=LAZY, the default on
// Linux since CUDA 12.2), and loading can wait for the work already running on the device. A
// kernel first launched inside a latched block therefore blocks the enqueueing thread until the
// latch kernel gives up, and the block timer falls back to the host clock (seen on the H200: the
// unified_memory touch kernel and the small_copies gather kernel, whenever their case was the
// first in the process to launch them). Load every kernel a latched block launches, with the
// device it runs on current, before the first block.
template <typename... Args>
void load_kernel(void (*kernel)(Args...)) {
  cudaFuncAttributes attributes{};
  PB_CUDA(cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(kernel)));
}

}  // namespace pathbench
