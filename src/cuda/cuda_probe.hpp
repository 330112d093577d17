#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pathbench {

struct CudaDeviceInfo {
  int index = 0;
  std::string name;
  std::string pci_bus_id;  // as cudaDeviceGetPCIBusId gives it
  std::uint64_t memory_bytes = 0;
  int async_engines = 0;
  int compute_major = 0, compute_minor = 0;
};

// What the CUDA runtime reports. Built without CUDA, `unavailable_reason` says so.
struct CudaProbe {
  std::optional<int> runtime_version;
  std::optional<int> driver_version;
  std::string unavailable_reason;  // empty when devices were found
  std::vector<CudaDeviceInfo> devices;
};

CudaProbe probe_cuda();

}  // namespace pathbench
