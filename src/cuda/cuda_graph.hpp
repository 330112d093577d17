#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <type_traits>

#include "cuda/cuda_check.hpp"

namespace pathbench {

// A CUDA graph captured from the work a callable puts on a stream, instantiated and uploaded, so a
// launch costs the launch and nothing of its set-up.
class CapturedGraph {
 public:
  CapturedGraph() = default;
  // `enqueue` puts the work on `stream` and returns the first error instead of throwing, so the
  // capture is always ended and the stream never left capturing. Synchronises `stream`.
  template <typename Enqueue>
  CapturedGraph(cudaStream_t stream, Enqueue&& enqueue) {
    PB_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    const cudaError_t err = enqueue();
    cudaGraph_t graph = nullptr;
    const cudaError_t end = cudaStreamEndCapture(stream, &graph);
    graph_.reset(graph);
    PB_CUDA(err);
    PB_CUDA(end);
    PB_CUDA(cudaGraphGetNodes(graph_.get(), nullptr, &nodes_));
    cudaGraphExec_t exec = nullptr;
    PB_CUDA(cudaGraphInstantiateWithFlags(&exec, graph_.get(), 0));
    exec_.reset(exec);
    PB_CUDA(cudaGraphUpload(exec_.get(), stream));
    PB_CUDA(cudaStreamSynchronize(stream));
  }

  // Nodes the capture produced (one per captured operation).
  std::size_t nodes() const { return nodes_; }
  void launch(cudaStream_t stream) const { PB_CUDA(cudaGraphLaunch(exec_.get(), stream)); }

 private:
  struct GraphDeleter {
    void operator()(cudaGraph_t g) const { cudaGraphDestroy(g); }
  };
  struct ExecDeleter {
    void operator()(cudaGraphExec_t g) const { cudaGraphExecDestroy(g); }
  };
  std::unique_ptr<std::remove_pointer_t<cudaGraph_t>, GraphDeleter> graph_;
  std::unique_ptr<std::remove_pointer_t<cudaGraphExec_t>, ExecDeleter> exec_;  // freed first
  std::size_t nodes_ = 0;
};

}  // namespace pathbench
