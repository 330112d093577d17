#pragma once

// The `serving` family: a stream of requests replayed against one GPU the way an inference server
// issues them — each request's input copied host to device, a decode-like step, its output
// copied back — through one of five host-memory strategies, with the per-request latency
// distribution as the result. A bulk transfer issued just before each request shows head-of-line
// blocking and what chunking the bulk copy does about it.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "measure/family.hpp"
#include "measure/host_placement.hpp"
#include "scenario/request_stream.hpp"

namespace pathbench {

enum class ServingStrategy {
  kPageable,            // cudaMemcpyAsync straight from the request's pageable buffer
  kPinPerRequest,       // cudaHostRegister the buffer, copy, cudaHostUnregister
  kPinnedPool,          // memcpy into a pooled pinned slot, async copy; pageable when exhausted
  kPinnedPoolChunked,   // the same in slot-sized chunks
  kPreallocatedPinned,  // the data is already in pinned memory: the ideal
  // Requests arriving within coalesce_us of the first packed (memcpy) into one pinned buffer and
  // copied as one transfer; each request's step then reads its part (timed arrivals only).
  kCoalesced,
};
enum class ServingArrival { kBackToBack, kPoisson, kBursts, kTrace };
// kStream: CPU offload / weight streaming for the whole repetition (bench/weight_stream.hpp).
enum class ServingBackground { kNone, kSameDirection, kOppositeDirection, kStream };

struct ServingRequest {
  ServingStrategy strategy = ServingStrategy::kPreallocatedPinned;
  ServingArrival arrival = ServingArrival::kBackToBack;
  std::uint64_t request_bytes = 0;   // host -> device per request
  std::uint64_t response_bytes = 0;  // device -> host per request (KV offload)
  std::uint64_t kernel_ns = 0;       // the step's duration on the GPU
  int requests = 2000;               // per repetition
  double rate_per_s = 0;             // poisson and bursts
  int burst_size = 8;
  int submitters = 1;
  // Where the host memory (request buffers, staging slots, pinned buffers) and the submitter and
  // completion threads are.
  HostPlacementRequest placement;
  bool high_priority = false;  // request streams at the device's greatest priority
  ServingBackground background = ServingBackground::kNone;
  std::uint64_t bulk_bytes = 0;
  std::uint64_t bulk_chunk_bytes = 0;  // the bulk transfer is issued as copies of this size
  int stream_slots = 2;
  std::uint64_t coalesce_ns = 50'000;  // coalesced: the aggregation window
  int coalesce_max = 16;  // coalesced: most requests in one transfer                // background
                          // stream: pinned staging slots of the stream
  std::uint64_t chunk_bytes = 0;  // pinned_pool_chunked: slot size
  int pool_slots = 8;
  // pool_buckets: the pool's size classes (slot bytes, slots), smallest first; empty: one bucket
  // of pool_slots slots of the request size (chunked: chunk_bytes).
  std::vector<std::pair<std::uint64_t, int>> pool_buckets;
  // Every repetition captured by CUPTI: the GPU's own timestamps of each request's input copy
  // and of the gaps between steps, and the timeline written as a Chrome trace.
  bool gpu_timeline = false;
  // arrival trace: the requests as the trace file gives them (request_bytes, response_bytes are
  // then the largest of them, kernel_ns 0 and requests their number).
  std::vector<Request> trace;
  std::uint64_t h2d_bytes(std::size_t q) const {
    return trace.empty() ? request_bytes : trace[q].h2d_bytes;
  }
  std::uint64_t d2h_bytes(std::size_t q) const {
    return trace.empty() ? response_bytes : trace[q].d2h_bytes;
  }
  std::uint64_t step_ns(std::size_t q) const {
    return trace.empty() ? kernel_ns : static_cast<std::uint64_t>(trace[q].kernel_us * 1000);
  }
  bool coalesced() const { return strategy == ServingStrategy::kCoalesced; }
  bool streaming() const { return background == ServingBackground::kStream; }
  bool pooled() const {
    return strategy == ServingStrategy::kPinnedPool ||
           strategy == ServingStrategy::kPinnedPoolChunked;
  }
};

// h2d_latency, request_latency (per request), throughput, copies_issued; pooled strategies add
// the pool's four; gpu_timeline adds h2d_gpu_time and step_gap (per request, from CUPTI);
// background stream adds stream_throughput; coalesced adds coalesce_wait (per request: arrival
// to its transfer's issue) and batch_size (requests per transfer).
std::vector<MetricSpec> serving_metrics(const ServingRequest& r);

// "16KiB:8,64KiB:8,1MiB:2" as (slot bytes, slots), sorted by size. Throws std::invalid_argument
// saying what is wrong.
std::vector<std::pair<std::uint64_t, int>> parse_pool_buckets(const std::string& text);
// pool_b<slot bytes>_{requests,spills_out,spills_in,fallbacks,mean_free,high_water}: per bucket.
std::vector<MetricSpec> pool_bucket_metrics(const std::vector<std::pair<std::uint64_t, int>>& b);

std::unique_ptr<Family> make_serving_family();
std::unique_ptr<CaseBench> make_serving_bench(const ServingRequest& r, const Machine& machine,
                                              int device);  // bench/serving.cu

}  // namespace pathbench
