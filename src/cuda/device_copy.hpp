#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace pathbench {

// A copy done by the SMs of a device instead of its copy engines: the source may be any memory
// the device can address — a peer GPU's memory over peer access, which is the read path a kernel
// consuming a peer's tensors takes. Sized once for `bytes` on `device`: one thread per 16-byte
// vector, at most four blocks per SM (grid-stride beyond that).
class DeviceCopyKernel {
 public:
  DeviceCopyKernel(int device, std::size_t bytes);
  // dst[i] = src[i] for the construction's `bytes`, launched on `stream`, a stream of the
  // construction device, which must be current. Both buffers 16-byte aligned (cudaMalloc is).
  void launch(std::byte* dst, const std::byte* src, cudaStream_t stream) const;
  int blocks() const { return blocks_; }

  static constexpr int kThreads = 512;

 private:
  std::size_t bytes_;
  int blocks_ = 1;
};

}  // namespace pathbench
