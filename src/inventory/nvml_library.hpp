#pragma once

#include <memory>
#include <string>

#include "inventory/environment.hpp"

namespace pathbench {

struct NvmlApi;  // inventory/nvml_api.hpp; complete only where nvml.h is

// NVML loaded at run time with dlopen("libnvidia-ml.so.1"): no link dependency, so the binary
// runs on a node without the driver (the library is part of the driver, not the toolkit). One
// object holds one function table and one nvmlInit_v2 ... nvmlShutdown. Built without nvml.h,
// every session fails to open and says so, and callers take the nvidia-smi fallback.
class NvmlSession {
 public:
  // Throws std::runtime_error naming the step that failed: built without nvml.h, library not
  // loadable, a required symbol missing, or nvmlInit_v2's error.
  NvmlSession();
  // A given function table (tests fill it with fakes); the same checks and nvmlInit_v2.
  explicit NvmlSession(const NvmlApi& api);
  ~NvmlSession();
  NvmlSession(const NvmlSession&) = delete;
  NvmlSession& operator=(const NvmlSession&) = delete;

  const NvmlApi& api() const { return *api_; }

  // Fills the dynamic fields of the GPU at gpu.pci_bus_id and sets gpu.source to "nvml", or to
  // "unavailable: <why>" when NVML has no such GPU. A query the driver does not support leaves
  // its field empty. Process names and `self` are left to the caller. Never throws.
  void sample(GpuEnvironment& gpu) const;

 private:
  struct LibraryCloser {
    void operator()(void* handle) const;
  };
  void start();  // checks the required functions and calls nvmlInit_v2

  std::unique_ptr<void, LibraryCloser> library_;
  std::unique_ptr<NvmlApi> api_;
};

}  // namespace pathbench
