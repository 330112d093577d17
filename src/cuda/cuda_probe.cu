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
  for (const auto& from : probe.devices) {
    for (const auto& to : probe.devices) {
      if (from.index == to.index) continue;
      PeerInfo peer;
      peer.from = from.index;
      peer.to = to.index;
      // Errors are per pair (a GPU the driver cannot pair is not a failed probe); clear them so
      // they do not surface in a later, unrelated check.
      int can = 0, supported = 0;
      const bool can_ok = cudaDeviceCanAccessPeer(&can, from.index, to.index) == cudaSuccess;
      const bool supported_ok = cudaDeviceGetP2PAttribute(&supported, cudaDevP2PAttrAccessSupported,
                                                          from.index, to.index) == cudaSuccess;
      // Both must agree where both answer; either alone is taken at its word.
      peer.access_supported =
          (can_ok || supported_ok) && (!can_ok || can != 0) && (!supported_ok || supported != 0);
      int value = 0;
      if (cudaDeviceGetP2PAttribute(&value, cudaDevP2PAttrPerformanceRank, from.index, to.index) ==
          cudaSuccess) {
        peer.performance_rank = value;
      }
      value = 0;
      if (cudaDeviceGetP2PAttribute(&value, cudaDevP2PAttrNativeAtomicSupported, from.index,
                                    to.index) == cudaSuccess) {
        peer.native_atomics = value != 0;
      }
      cudaGetLastError();
      probe.peers.push_back(peer);
    }
  }
  return probe;
}

std::optional<std::string> cuda_context_fault(const std::vector<int>& devices) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return std::nullopt;  // no CUDA here: nothing a case could have poisoned
  }
  int previous = 0;
  const bool had_device = cudaGetDevice(&previous) == cudaSuccess;
  std::optional<std::string> fault;
  for (const int d : devices) {
    if (d < 0 || d >= count) continue;
    cudaError_t err = cudaSetDevice(d);
    // A non-sticky error (a refused allocation) stays pending until read; left there, the next
    // case's first cudaGetLastError() would fail it. Reading clears it; a sticky one stays.
    cudaGetLastError();
    if (err == cudaSuccess) err = cudaDeviceSynchronize();
    if (err == cudaSuccess) continue;
    cudaGetLastError();
    err = cudaDeviceSynchronize();
    if (err != cudaSuccess) {
      fault = "GPU " + std::to_string(d) + ": " + cudaGetErrorName(err) + " (" +
              cudaGetErrorString(err) + ")";
      break;
    }
  }
  if (had_device && !fault) cudaSetDevice(previous);
  return fault;
}

}  // namespace pathbench
