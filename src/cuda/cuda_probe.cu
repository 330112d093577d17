#include <cuda_runtime_api.h>

#include "cuda/cuda_probe.hpp"

namespace pathbench {

CudaProbe probe_cuda() {
  CudaProbe probe;
  int version = 0;
  if (cudaRuntimeGetVersion(&version) == cudaSuccess) probe.runtime_version = version;
  if (cudaDriverGetVersion(&version) == cudaSuccess && version > 0) probe.driver_version = version;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    probe.unavailable_reason = std::string("no usable CUDA device: cudaGetDeviceCount says ") +
                               cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")";
    cudaGetLastError();
    return probe;
  }
  if (count == 0) {
    probe.unavailable_reason = "no CUDA device is visible (cudaGetDeviceCount = 0)";
    return probe;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    CudaDeviceInfo info;
    info.index = i;
    info.name = prop.name;
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, i) == cudaSuccess) info.pci_bus_id = bus;
    info.memory_bytes = prop.totalGlobalMem;
    info.async_engines = prop.asyncEngineCount;
    info.compute_major = prop.major;
    info.compute_minor = prop.minor;
    probe.devices.push_back(std::move(info));
  }
  return probe;
}

}  // namespace pathbench
