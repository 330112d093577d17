#include "cuda/device_copy.hpp"

#include <algorithm>
#include <cstdint>

#include "cuda/cuda_check.hpp"

namespace pathbench {

namespace {

// 16 bytes per load and store where it can, then the tail byte by byte.
__global__ void device_copy_kernel(std::byte* __restrict__ dst, const std::byte* __restrict__ src,
                                   std::size_t bytes) {
  const std::size_t vectors = bytes / 16;
  auto* d = reinterpret_cast<uint4*>(dst);
  const auto* s = reinterpret_cast<const uint4*>(src);
  const std::size_t stride = std::size_t(blockDim.x) * gridDim.x;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < vectors;
       i += stride) {
    d[i] = s[i];
  }
  const std::size_t tail = vectors * 16;
  if (blockIdx.x == 0 && threadIdx.x < bytes - tail) {
    dst[tail + threadIdx.x] = src[tail + threadIdx.x];
  }
}

}  // namespace

DeviceCopyKernel::DeviceCopyKernel(int device, std::size_t bytes) : bytes_(bytes) {
  int sms = 1;
  PB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::uint64_t wanted = (bytes / 16 + kThreads - 1) / kThreads;
  blocks_ =
      static_cast<int>(std::clamp<std::uint64_t>(wanted, 1, static_cast<std::uint64_t>(sms) * 4));
}

void DeviceCopyKernel::launch(std::byte* dst, const std::byte* src, cudaStream_t stream) const {
  device_copy_kernel<<<blocks_, kThreads, 0, stream>>>(dst, src, bytes_);
  PB_CUDA(cudaGetLastError());
}

}  // namespace pathbench
