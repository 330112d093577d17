#include "cuda/cuda_probe.hpp"

namespace pathbench {

CudaProbe probe_cuda() {
  CudaProbe probe;
  probe.unavailable_reason =
      "pathbench was built without CUDA (no nvcc at configure time); rebuild on a machine with "
      "the CUDA toolkit to run the GPU families";
  return probe;
}

std::optional<std::string> cuda_context_fault(const std::vector<int>&) { return std::nullopt; }

}  // namespace pathbench
