#pragma once

// A Completion (measure/pinned_staging_pool.hpp) that is a CUDA event: done() polls it, wait()
// blocks on it. What owns the event (a recycler, a per-slot array) is the caller's business; the
// staging pool and the storage reader only ever ask whether the copy behind it has finished.

#include <cuda_runtime.h>

#include "cuda/cuda_check.hpp"
#include "measure/pinned_staging_pool.hpp"

namespace pathbench {

class EventCompletion : public Completion {
 public:
  explicit EventCompletion(cudaEvent_t event) : event_(event) {}
  bool done() override {
    const cudaError_t e = cudaEventQuery(event_);
    if (e == cudaErrorNotReady) return false;
    PB_CUDA(e);
    return true;
  }
  void wait() override { PB_CUDA(cudaEventSynchronize(event_)); }

 protected:
  cudaEvent_t event() const { return event_; }

 private:
  cudaEvent_t event_;
};

}  // namespace pathbench
