#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "cuda/cuda_resources.hpp"

namespace pathbench {

// Device-side twins of fill_pattern / verify_pattern, so device buffers are filled and checked
// without staging them through host memory.
void fill_pattern_on_device(std::byte* device_buffer, std::size_t bytes, std::uint64_t seed,
                            cudaStream_t stream);

// Checks device buffers against the pattern; owns the mapped word the kernel reports into, so a
// check per sample costs one kernel and no allocation.
class DevicePatternChecker {
 public:
  DevicePatternChecker();
  // First mismatching byte, else nothing. Synchronises `stream`.
  std::optional<std::size_t> find_mismatch(const std::byte* device_buffer, std::size_t bytes,
                                           std::uint64_t seed, cudaStream_t stream);
  // Throws CaseFailure naming `what` and the first mismatching byte.
  void verify(const std::byte* device_buffer, std::size_t bytes, std::uint64_t seed,
              cudaStream_t stream, const std::string& what);

 private:
  PinnedHostMemory result_;
  unsigned long long* device_view_ = nullptr;
};

}  // namespace pathbench
