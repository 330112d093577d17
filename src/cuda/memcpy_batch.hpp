#pragma once

// cudaMemcpyBatchAsync (CUDA 12.8+) of one fixed list of copies, each reading its source in stream
// order, over the runtime versions whose declarations differ. A build against an older runtime
// has no such call: enqueue() says cudaErrorNotSupported (Requirements::cuda_runtime skips such a
// case before it gets here).

#include <cuda_runtime_api.h>

#include <cstddef>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/errors.hpp"
#include "cuda/cuda_check.hpp"

namespace pathbench {

#if CUDART_VERSION >= 12080 && CUDART_VERSION < 13000
// CUDA 12.8 and 12.9 take a failIdx before the stream (CUDA 13 dropped it), and their pointer-array
// parameters are not const-qualified like CUDA 13's: convert to whatever this header declares.
template <typename D, typename S, typename Z, typename A, typename I, typename F>
cudaError_t memcpy_batch_12x(cudaError_t (*fn)(D, S, Z, std::size_t, A, I, std::size_t, F,
                                               cudaStream_t),
                             void** dsts, void** srcs, std::size_t* sizes, std::size_t count,
                             cudaMemcpyAttributes* attrs, std::size_t* attrs_index,
                             std::size_t* fail_index, cudaStream_t stream) {
  return fn(static_cast<D>(static_cast<void*>(dsts)), static_cast<S>(static_cast<void*>(srcs)),
            sizes, count, attrs, attrs_index, 1, fail_index, stream);
}
#endif

class MemcpyBatch {
 public:
  MemcpyBatch() = default;
  // Copy i moves sizes[i] bytes from srcs[i] to dsts[i].
  MemcpyBatch(std::vector<void*> dsts, std::vector<void*> srcs, std::vector<std::size_t> sizes)
      : dsts_(std::move(dsts)), srcs_(std::move(srcs)), sizes_(std::move(sizes)) {
#if CUDART_VERSION >= 12080
    attrs_.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    attrs_.flags = cudaMemcpyFlagDefault;
#endif
  }

  std::size_t size() const { return sizes_.size(); }

  // One cudaMemcpyBatchAsync of the whole list on `stream`; its error, not thrown.
  cudaError_t enqueue(cudaStream_t stream) {
#if CUDART_VERSION >= 13000
    return cudaMemcpyBatchAsync(dsts_.data(), srcs_.data(), sizes_.data(), sizes_.size(), &attrs_,
                                &attrs_index_, 1, stream);
#elif CUDART_VERSION >= 12080
    std::size_t fail_index = std::numeric_limits<std::size_t>::max();
    return memcpy_batch_12x(&cudaMemcpyBatchAsync, dsts_.data(), srcs_.data(), sizes_.data(),
                            sizes_.size(), &attrs_, &attrs_index_, &fail_index, stream);
#else
    (void)stream;
    return cudaErrorNotSupported;
#endif
  }

  // Enqueues the batch once and waits for it. A driver older than the runtime refuses the call:
  // SkipCase with the reason.
  void probe(cudaStream_t stream) {
    const cudaError_t err = enqueue(stream);
    if (err == cudaErrorNotSupported || err == cudaErrorCallRequiresNewerDriver) {
      cudaGetLastError();
      throw SkipCase(std::string("cudaMemcpyBatchAsync is not available with this driver: ") +
                     cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
    }
    PB_CUDA(err);
    PB_CUDA(cudaStreamSynchronize(stream));
  }

 private:
  std::vector<void*> dsts_, srcs_;
  std::vector<std::size_t> sizes_;
#if CUDART_VERSION >= 12080
  cudaMemcpyAttributes attrs_{};
  std::size_t attrs_index_ = 0;
#endif
};

}  // namespace pathbench
