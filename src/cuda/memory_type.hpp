#pragma once

#include <cuda_runtime_api.h>

#include <string>

namespace pathbench {

// How CUDA classifies a pointer, in words for checks ("host (page-locked)").
inline std::string memory_type_name(cudaMemoryType t) {
  switch (t) {
    case cudaMemoryTypeUnregistered:
      return "unregistered (pageable)";
    case cudaMemoryTypeHost:
      return "host (page-locked)";
    case cudaMemoryTypeDevice:
      return "device";
    case cudaMemoryTypeManaged:
      return "managed";
  }
  return "unknown";
}

}  // namespace pathbench
