#pragma once

// The `small_copies` family: N copies of S bytes between scattered pinned host pieces and one
// contiguous device buffer, issued five ways.

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "measure/family.hpp"

namespace pathbench {

// What a small_copies case's axes ask for, decoded once.
struct SmallCopiesRequest {
  enum class Method { kIndividual, kCoalesced, kBatched, kGraph, kGatherKernel };
  enum class Direction { kH2D, kD2H };
  Method method = Method::kIndividual;
  Direction direction = Direction::kH2D;
  std::uint64_t count = 1;  // N pieces per batch
  std::uint64_t bytes = 1;  // S bytes per piece

  std::uint64_t batch_bytes() const { return count * bytes; }
  // Host pieces are scattered: piece i starts at i * piece_pitch() of one pinned allocation, so
  // no two pieces are contiguous (at least 4 KiB apart) and each starts on a 4 KiB boundary.
  std::uint64_t piece_pitch() const { return (bytes + 4095) / 4096 * 4096 + 4096; }
  // CUDA API calls per batch: N cudaMemcpyAsync for individual; one cudaMemcpyAsync (after the
  // host packing), cudaMemcpyBatchAsync, cudaGraphLaunch or kernel launch for the others.
  std::uint64_t api_calls_per_batch() const { return method == Method::kIndividual ? count : 1; }
  // Copy operations (DMA copies the GPU performs) per batch: N, except 1 for coalesced and 0 for
  // the gather kernel, which moves the data with loads and stores.
  std::uint64_t copy_operations_per_batch() const {
    return method == Method::kCoalesced ? 1 : method == Method::kGatherKernel ? 0 : count;
  }
  // Host memory the case allocates: the scattered pieces, plus the staging buffer of coalesced.
  std::uint64_t host_bytes() const {
    return count * piece_pitch() + (method == Method::kCoalesced ? batch_bytes() : 0);
  }
  // API calls in one latched block: up to 256 and 1024 queued copies, at least one call; a graph
  // launch, whose copies the driver queues all at once, alone.
  std::uint64_t calls_per_block() const;
  // Batches whose time sizes a sample: as many as 256 calls hold, 1 to 4.
  std::uint64_t probe_batches() const;
};
SmallCopiesRequest decode_small_copies_request(const CaseSpec& spec);
std::string_view to_string(SmallCopiesRequest::Method m);

// The metrics a small_copies case records, in order.
std::vector<MetricSpec> small_copies_metrics(const SmallCopiesRequest& r);

// `cuda_runtime`: the runtime pathbench was built against, whose cudaMemcpyBatchAsync (12.8+)
// method=batched needs (tests pass an older one).
std::unique_ptr<Family> make_small_copies_family(int cuda_runtime = built_cuda_runtime());

// The CUDA bench (bench/small_copies.cu).
std::unique_ptr<CaseBench> make_small_copies_bench(const SmallCopiesRequest& r,
                                                   const Machine& machine, int device);

}  // namespace pathbench
