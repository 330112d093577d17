#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace pathbench {

// A kernel that gathers `count` pieces of `bytes` each, one every `pitch` bytes of `src`, into
// `dst` back to back: N scattered pieces moved by one launch instead of N copies. `src` is any
// memory the device can read (mapped pinned host memory, say); its loads are ld.global.cv, so
// every launch reads the source anew over the link, never lines a previous launch left in L2.
class PitchedGather {
 public:
  PitchedGather() = default;
  // Loads the kernel and sizes the grid for the current device (see kernel_loading.hpp: before
  // the first latched block that launches it).
  PitchedGather(const std::byte* src, std::size_t pitch, std::byte* dst, std::size_t bytes,
                std::uint64_t count);
  // One kernel launch on `stream`; throws CudaError when the launch fails.
  void launch(cudaStream_t stream) const;

 private:
  const std::byte* src_ = nullptr;
  std::size_t pitch_ = 0;
  std::byte* dst_ = nullptr;
  std::size_t bytes_ = 0;
  std::uint64_t chunks_per_piece_ = 0;
  std::uint64_t chunks_ = 0;
  unsigned grid_ = 1;
};

}  // namespace pathbench
