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

// The driver's view of one ordered GPU pair (CUDA indexes). A query that fails leaves its field
// at the default (no access, rank 0, no atomics).
struct PeerInfo {
  int from = 0, to = 0;
  bool access_supported = false;  // cudaDeviceCanAccessPeer (and cudaDevP2PAttrAccessSupported)
  int performance_rank = 0;       // cudaDevP2PAttrPerformanceRank: lower is a better link
  bool native_atomics = false;    // cudaDevP2PAttrNativeAtomicSupported
};

// What the CUDA runtime reports. Built without CUDA, `unavailable_reason` says so.
struct CudaProbe {
  std::optional<int> runtime_version;
  std::optional<int> driver_version;
  std::string unavailable_reason;  // empty when devices were found
  std::vector<CudaDeviceInfo> devices;
  std::vector<PeerInfo> peers;  // every ordered pair of `devices`; empty with fewer than two
};

CudaProbe probe_cuda();

// After a failed case: whether one of `devices` has a CUDA context this process can no longer
// use — a sticky error (an illegal address, a kernel that faulted or was killed) that every later
// CUDA call would return. The error's name and the device, or nothing when each device still
// synchronizes (a non-sticky error such as out-of-memory is cleared and leaves nothing).
std::optional<std::string> cuda_context_fault(const std::vector<int>& devices);

}  // namespace pathbench
