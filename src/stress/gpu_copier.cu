#include <cuda_runtime_api.h>

#include <cstring>
#include <optional>
#include <utility>

#include "cuda/cuda_check.hpp"
#include "cuda/cuda_resources.hpp"
#include "placement/memory_policy.hpp"
#include "stress/gpu_copier.hpp"

namespace pathbench {

namespace {

// Declared in the order they are made: the stream, made last, is destroyed first.
struct CopyBuffers {
  PinnedHostMemory host;
  DeviceMemory gpu;
  Stream stream;
};

CopyBuffers make_buffers(int device, std::size_t bytes, std::optional<int> host_node) {
  // Every CUDA object of the copier belongs to `device`, including the context cudaMallocHost
  // initialises.
  DeviceScope device_scope(device);
  std::optional<MemoryPolicyScope> policy;
  // cudaMallocHost faults its pages in at once, so the calling thread's memory policy decides
  // where they go: bound for this allocation only.
  if (host_node) policy.emplace(*host_node);
  PinnedHostMemory host(bytes);
  policy.reset();
  DeviceMemory gpu(bytes);
  Stream stream;
  // Both ends hold defined bytes, whichever is the source: a memcheck run of the tool must not
  // flag copies of uninitialised memory.
  std::memset(host.get(), 0x5a, bytes);
  PB_CUDA(cudaMemsetAsync(gpu.get(), 0x5a, bytes, stream.get()));
  stream.synchronize();
  return CopyBuffers{std::move(host), std::move(gpu), std::move(stream)};
}

}  // namespace

struct GpuCopier::Impl {
  int device;
  CopyDirection direction;
  std::size_t bytes;
  CopyBuffers buffers;
};

GpuCopier::GpuCopier(int device, CopyDirection direction, std::size_t bytes,
                     std::optional<int> host_node)
    : impl_(std::make_unique<Impl>(
          Impl{device, direction, bytes, make_buffers(device, bytes, host_node)})) {}

GpuCopier::GpuCopier(GpuCopier&&) noexcept = default;
GpuCopier& GpuCopier::operator=(GpuCopier&&) noexcept = default;
GpuCopier::~GpuCopier() = default;

std::uint64_t GpuCopier::copy_once() {
  Impl& c = *impl_;
  // The device is per thread; the worker thread that calls this never set it.
  PB_CUDA(cudaSetDevice(c.device));
  if (c.direction == CopyDirection::kH2D) {
    PB_CUDA(cudaMemcpyAsync(c.buffers.gpu.get(), c.buffers.host.get(), c.bytes,
                            cudaMemcpyHostToDevice, c.buffers.stream.get()));
  } else {
    PB_CUDA(cudaMemcpyAsync(c.buffers.host.get(), c.buffers.gpu.get(), c.bytes,
                            cudaMemcpyDeviceToHost, c.buffers.stream.get()));
  }
  c.buffers.stream.synchronize();
  return c.bytes;
}

}  // namespace pathbench
