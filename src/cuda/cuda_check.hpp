#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace pathbench {

class CudaError : public std::runtime_error {
 public:
  CudaError(const std::string& call, cudaError_t err)
      : std::runtime_error(call + ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) +
                           ")"),
        error_(err) {}
  cudaError_t error() const { return error_; }

 private:
  cudaError_t error_;
};

inline void cuda_check(cudaError_t err, const char* call) {
  if (err != cudaSuccess) throw CudaError(call, err);
}

}  // namespace pathbench

#define PB_CUDA(call) ::pathbench::cuda_check((call), #call)
