#pragma once

#include <memory>

#include "inventory/environment.hpp"

namespace pathbench {

// NVML loaded at run time with dlopen("libnvidia-ml.so.1"): no header or link dependency, so the
// binary runs on a node without the driver (the library is part of the driver, not the toolkit).
// One object holds one library handle and one nvmlInit_v2 ... nvmlShutdown.
class NvmlSession {
 public:
  // Throws std::runtime_error naming the step that failed: library not loadable, a required
  // symbol missing, or nvmlInit_v2's error.
  NvmlSession();
  ~NvmlSession();
  NvmlSession(const NvmlSession&) = delete;
  NvmlSession& operator=(const NvmlSession&) = delete;

  // Fills the dynamic fields of the GPU at gpu.pci_bus_id and sets gpu.source to "nvml", or to
  // "unavailable: <why>" when NVML has no such GPU. A query the driver does not support leaves
  // its field empty. Process names and `self` are left to the caller. Never throws.
  void sample(GpuEnvironment& gpu) const;

 private:
  struct Api;
  struct LibraryCloser {
    void operator()(void* handle) const;
  };
  std::unique_ptr<void, LibraryCloser> library_;
  std::unique_ptr<Api> api_;
};

}  // namespace pathbench
