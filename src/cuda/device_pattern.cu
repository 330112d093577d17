#include "cuda/device_pattern.hpp"

#include <limits>

#include "core/errors.hpp"
#include "cuda/cuda_resources.hpp"
#include "core/pattern_word.hpp"

namespace pathbench {

namespace {

constexpr int kThreads = 256;

int blocks_for(std::size_t items) {
  const std::size_t blocks = (items + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 65535 * 8 ? (blocks == 0 ? 1 : blocks) : 65535 * 8);
}

__global__ void fill_kernel(std::byte* buffer, std::size_t bytes, std::uint64_t seed) {
  const std::size_t words = bytes / 8;
  auto* w = reinterpret_cast<std::uint64_t*>(buffer);
  const std::size_t stride = std::size_t(blockDim.x) * gridDim.x;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < words; i += stride) {
    w[i] = pattern_word(seed, i);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    for (std::size_t i = words * 8; i < bytes; ++i) {
      buffer[i] = static_cast<std::byte>(pattern_byte(seed, i));
    }
  }
}

__global__ void check_kernel(const std::byte* buffer, std::size_t bytes, std::uint64_t seed,
                             unsigned long long* first_bad) {
  const std::size_t words = bytes / 8;
  const auto* w = reinterpret_cast<const std::uint64_t*>(buffer);
  const std::size_t stride = std::size_t(blockDim.x) * gridDim.x;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < words; i += stride) {
    const std::uint64_t v = w[i];
    if (v != pattern_word(seed, i)) {
      for (std::size_t b = 0; b < 8; ++b) {
        if (static_cast<std::uint8_t>(v >> (8 * b)) != pattern_byte(seed, i * 8 + b)) {
          atomicMin(first_bad, static_cast<unsigned long long>(i * 8 + b));
          break;
        }
      }
    }
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    for (std::size_t i = words * 8; i < bytes; ++i) {
      if (static_cast<std::uint8_t>(buffer[i]) != pattern_byte(seed, i)) {
        atomicMin(first_bad, static_cast<unsigned long long>(i));
        break;
      }
    }
  }
}

}  // namespace

void fill_pattern_on_device(std::byte* device_buffer, std::size_t bytes, std::uint64_t seed,
                            cudaStream_t stream) {
  // Device allocations are 256-byte aligned, so the word view is aligned.
  fill_kernel<<<blocks_for(bytes / 8), kThreads, 0, stream>>>(device_buffer, bytes, seed);
  PB_CUDA(cudaGetLastError());
}

DevicePatternChecker::DevicePatternChecker()
    : result_(sizeof(unsigned long long), cudaHostAllocMapped) {
  PB_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_view_), result_.get(), 0));
}

std::optional<std::size_t> DevicePatternChecker::find_mismatch(const std::byte* device_buffer,
                                                               std::size_t bytes,
                                                               std::uint64_t seed,
                                                               cudaStream_t stream) {
  auto* first_bad = reinterpret_cast<volatile unsigned long long*>(result_.get());
  *first_bad = std::numeric_limits<unsigned long long>::max();
  check_kernel<<<blocks_for(bytes / 8), kThreads, 0, stream>>>(device_buffer, bytes, seed,
                                                               device_view_);
  PB_CUDA(cudaGetLastError());
  PB_CUDA(cudaStreamSynchronize(stream));
  const unsigned long long value = *first_bad;
  if (value == std::numeric_limits<unsigned long long>::max()) return std::nullopt;
  return static_cast<std::size_t>(value);
}

void DevicePatternChecker::verify(const std::byte* device_buffer, std::size_t bytes,
                                  std::uint64_t seed, cudaStream_t stream,
                                  const std::string& what) {
  if (auto bad = find_mismatch(device_buffer, bytes, seed, stream)) {
    throw CaseFailure(what + ": byte " + std::to_string(*bad) + " of " + std::to_string(bytes) +
                      " differs from the pattern");
  }
}

}  // namespace pathbench
