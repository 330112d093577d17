// The `small_copies` family: N copies of S bytes from scattered pinned host pieces, issued five
// ways: N cudaMemcpyAsync, one coalesced copy packed on the host, one cudaMemcpyBatchAsync, a CUDA
// graph of the N copies, and a gather kernel reading mapped pinned memory.
//
// Timing (every method): a sample is k batches. The CUDA work of those batches is enqueued in
// latched blocks of at most kMaxLatchedCalls API calls and kMaxLatchedCopies copy operations
// (a batch that is one indivisible call, a graph launch or a cudaMemcpyBatchAsync, may exceed the
// copy limit on its own), each timed with CUDA events by the shared GpuBlockTimer; the block times
// are summed. A batch of individual copies longer than one block is split across blocks. So
// time_per_batch is the GPU's time to perform the batch once everything is queued, never the
// host's issue time, which is reported separately as issue_cpu_time (thread CPU time spent in the
// issuing calls, CLOCK_THREAD_CPUTIME_ID).
//
// coalesced: the host packing (h2d: pieces -> pinned staging buffer) or unpacking (d2h: staging ->
// pieces) is synchronous CPU work on the batch's critical path, so it is part of the batch:
// time_per_batch = pack_time (steady clock around k packs, / k) + copy_time (CUDA events around
// the latched copies, / k). Both parts are reported as metrics of their own; issue_cpu_time
// includes the packing's thread CPU time.
#include <cuda_runtime_api.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include "bench/small_copies_family.hpp"
#include "core/errors.hpp"
#include "core/units.hpp"
#include "cuda/cuda_resources.hpp"
#include "cuda/device_pattern.hpp"
#include "cuda/gpu_block_timer.hpp"
#include "cuda/kernel_loading.hpp"
#include "cuda/memory_type.hpp"
#include "core/host_clock.hpp"
#include "core/pattern_word.hpp"
#include "placement/memory_policy.hpp"
#include "placement/thread_affinity.hpp"

namespace pathbench {

namespace {

constexpr std::uint64_t kSeed = 0x736d616c6cu;  // "small"
// A latched block must be enqueued while the latch holds the stream; a few hundred calls and about
// a thousand queued copies stay inside the driver's queue, so enqueueing never blocks.
constexpr std::uint64_t kMaxLatchedCalls = 256;
constexpr std::uint64_t kMaxLatchedCopies = 1024;
constexpr std::uint64_t kMaxBatchesPerSample = 20000;
constexpr int kGatherThreads = 256;
constexpr int kGatherUnroll = 4;
constexpr std::size_t kGatherChunk = std::size_t{kGatherThreads} * 16 * kGatherUnroll;  // 16 KiB

using Method = SmallCopiesRequest::Method;
using Direction = SmallCopiesRequest::Direction;

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Why method=batched cannot run with the CUDA runtime this file was compiled against, else "".
std::string batched_unavailable_in_this_build() {
#if CUDART_VERSION >= 12080
  return {};
#else
  return "cudaMemcpyBatchAsync needs CUDA 12.8 or newer; pathbench was built against CUDA "
         "runtime " +
         std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10);
#endif
}

// Fills [offset, offset + out.size()) of the logical pattern into `out` (fill_pattern's bytes at
// those positions), so scattered pieces together hold one contiguous pattern.
void fill_pattern_at(std::byte* out, std::size_t bytes, std::uint64_t offset, std::uint64_t seed) {
  std::size_t i = 0;
  for (; i < bytes && (offset + i) % 8 != 0; ++i) {
    out[i] = static_cast<std::byte>(pattern_byte(seed, offset + i));
  }
  for (; i + 8 <= bytes; i += 8) {
    const std::uint64_t w = pattern_word(seed, (offset + i) / 8);
    std::memcpy(out + i, &w, 8);
  }
  for (; i < bytes; ++i) out[i] = static_cast<std::byte>(pattern_byte(seed, offset + i));
}

// Index within `in` of the first byte that differs from the pattern at `offset`, else nothing.
std::optional<std::size_t> find_mismatch_at(const std::byte* in, std::size_t bytes,
                                            std::uint64_t offset, std::uint64_t seed) {
  std::size_t i = 0;
  auto byte_ok = [&](std::size_t k) {
    return static_cast<std::uint8_t>(in[k]) == pattern_byte(seed, offset + k);
  };
  for (; i < bytes && (offset + i) % 8 != 0; ++i) {
    if (!byte_ok(i)) return i;
  }
  for (; i + 8 <= bytes; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, in + i, 8);
    if (w != pattern_word(seed, (offset + i) / 8)) {
      for (std::size_t k = i;; ++k) {
        if (!byte_ok(k)) return k;
      }
    }
  }
  for (; i < bytes; ++i) {
    if (!byte_ok(i)) return i;
  }
  return std::nullopt;
}

// Piece `blockIdx`-strided chunks of kGatherChunk bytes: reads scattered pieces of mapped pinned
// host memory (one piece every `pitch` bytes) and writes them contiguously. Loads are ld.global.cv
// so that every batch reads host memory over the link, never lines a previous batch left in L2.
__global__ void gather_kernel(const unsigned char* __restrict__ src, std::size_t pitch,
                              unsigned char* __restrict__ dst, std::size_t piece_bytes,
                              std::uint64_t chunks_per_piece, std::uint64_t total_chunks) {
  for (std::uint64_t c = blockIdx.x; c < total_chunks; c += gridDim.x) {
    const std::uint64_t piece = c / chunks_per_piece;
    const std::size_t begin = static_cast<std::size_t>(c % chunks_per_piece) * kGatherChunk;
    const std::size_t len = piece_bytes - begin < kGatherChunk ? piece_bytes - begin : kGatherChunk;
    const unsigned char* s = src + piece * pitch + begin;
    unsigned char* d = dst + piece * piece_bytes + begin;
    std::size_t done = 0;
    if (((reinterpret_cast<std::uintptr_t>(s) | reinterpret_cast<std::uintptr_t>(d)) & 15) == 0) {
      const std::size_t vecs = len / 16;  // <= kGatherUnroll * blockDim.x: one round
      const auto* s4 = reinterpret_cast<const uint4*>(s);
      auto* d4 = reinterpret_cast<uint4*>(d);
      uint4 r[kGatherUnroll];
#pragma unroll
      for (int u = 0; u < kGatherUnroll; ++u) {
        const std::size_t v = threadIdx.x + std::size_t(u) * blockDim.x;
        if (v < vecs) r[u] = __ldcv(s4 + v);
      }
#pragma unroll
      for (int u = 0; u < kGatherUnroll; ++u) {
        const std::size_t v = threadIdx.x + std::size_t(u) * blockDim.x;
        if (v < vecs) d4[v] = r[u];
      }
      done = vecs * 16;
    }
    for (std::size_t b = done + threadIdx.x; b < len; b += blockDim.x) d[b] = __ldcv(s + b);
  }
}

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

struct GraphDeleter {
  void operator()(cudaGraph_t g) const { cudaGraphDestroy(g); }
};
struct GraphExecDeleter {
  void operator()(cudaGraphExec_t g) const { cudaGraphExecDestroy(g); }
};
using GraphPtr = std::unique_ptr<std::remove_pointer_t<cudaGraph_t>, GraphDeleter>;
using GraphExecPtr = std::unique_ptr<std::remove_pointer_t<cudaGraphExec_t>, GraphExecDeleter>;

// One sample's totals over k batches.
struct SampleTotals {
  double copy_seconds = 0;       // CUDA events, summed over the latched blocks
  double pack_seconds = 0;       // coalesced: host steady clock around the (un)packing
  double issue_cpu_seconds = 0;  // thread CPU time of the issuing calls (and the packing)
  std::uint64_t api_calls = 0;   // CUDA API calls the issuing code made for the batches
  std::uint64_t blocks = 0;      // latched blocks
};

class SmallCopiesBench final : public CaseBench {
 public:
  SmallCopiesBench(const CaseSpec& spec, const Machine& machine, int device)
      : request_(decode_small_copies_request(spec)), device_(device) {
    if (request_.method == Method::kBatched) {
      if (const auto why = batched_unavailable_in_this_build(); !why.empty()) throw SkipCase(why);
    }
    PB_CUDA(cudaSetDevice(device));
    if (const auto node = machine.gpu_local_node(device)) {
      if (const auto* cpus = machine.cpus_of_node(*node); cpus && !cpus->empty()) {
        node_ = *node;
        cpus_ = *cpus;
        affinity_.emplace(cpus_);
      }
    }
    PB_CUDA(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device));
    stream_.emplace();
    timer_.emplace();
    checker_.emplace();
    load_kernel(gather_kernel);  // before the first latched block (see kernel_loading.hpp)
    allocate();
    build_copy_lists();
    fill_source();
    if (request_.method == Method::kGraph) capture_graph();
    if (request_.method == Method::kBatched) probe_batched();
    record_memory_checks();
  }

  TimingMethod timing_method() const override {
    return timer_ && timer_->host_timed() ? TimingMethod::kHostSteadyClock
                                          : TimingMethod::kCudaEventsLatched;
  }

  std::vector<MetricSpec> metrics() const override { return small_copies_metrics(request_); }

  void warm_up(double min_time) override {
    clear_destination();
    run_sample(1);  // first touch of the path (graph upload, driver set-up): not counted
    const std::uint64_t probe =
        std::clamp<std::uint64_t>(kMaxLatchedCalls / request_.api_calls_per_batch(), 1, 4);
    clear_destination();
    const SampleTotals t = run_sample(probe);
    const double per_batch = (t.copy_seconds + t.pack_seconds) / static_cast<double>(probe);
    batches_ = operations_for(min_time, per_batch, kMaxBatchesPerSample);
  }

  Sample measure() override {
    clear_destination();
    const SampleTotals t = run_sample(batches_);
    const double k = static_cast<double>(batches_);
    ++samples_;
    last_api_calls_ = t.api_calls;
    last_blocks_ = t.blocks;
    if (t.api_calls != batches_ * request_.api_calls_per_batch()) calls_mismatch_ = true;
    const double seconds = t.copy_seconds + t.pack_seconds;
    const double per_batch = seconds / k;
    Sample s{seconds,
             {per_batch, static_cast<double>(request_.batch_bytes()) / per_batch / kGB,
              static_cast<double>(t.api_calls) / k, t.issue_cpu_seconds / k}};
    if (coalesced()) {
      s.values.push_back(t.pack_seconds / k);
      s.values.push_back(t.copy_seconds / k);
    }
    return s;
  }

  void verify() override {
    if (request_.direction == Direction::kH2D) {
      checker_->verify(device_buffer_.get(), request_.batch_bytes(), kSeed, stream_->get(),
                       "contiguous device destination of the " + std::to_string(request_.count) +
                           " pieces after the timed batches");
    } else {
      verify_host_pieces();
    }
    verified_ = true;
  }

  std::vector<Check> checks() const override {
    std::vector<Check> all = checks_;
    all.push_back({"copy_pattern", verified_,
                   verified_ ? "destination matched the pattern after every sample"
                             : "no sample was verified",
                   nullptr});
    all.push_back(copies_issued_check());
    all.push_back(timing_check());
    return all;
  }

  std::uint64_t operations_per_sample() const override { return batches_; }
  std::uint64_t bytes_per_sample() const override { return request_.batch_bytes() * batches_; }

 private:
  bool coalesced() const { return request_.method == Method::kCoalesced; }
  bool h2d() const { return request_.direction == Direction::kH2D; }
  cudaMemcpyKind kind() const { return h2d() ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost; }
  std::byte* host_piece(std::uint64_t i) const {
    return pieces_.get() + i * request_.piece_pitch();
  }
  std::byte* device_piece(std::uint64_t i) const {
    return device_buffer_.get() + i * request_.bytes;
  }

  void allocate() {
    const unsigned flags =
        request_.method == Method::kGatherKernel ? cudaHostAllocMapped : cudaHostAllocDefault;
    {
      std::optional<MemoryPolicyScope> policy;
      if (node_) policy.emplace(*node_);
      pieces_ = PinnedHostMemory(request_.count * request_.piece_pitch(), flags);
      if (coalesced()) staging_ = PinnedHostMemory(request_.batch_bytes());
    }
    device_buffer_ = DeviceMemory(request_.batch_bytes());
    if (request_.method == Method::kGatherKernel) {
      void* view = nullptr;
      PB_CUDA(cudaHostGetDevicePointer(&view, pieces_.get(), 0));
      pieces_device_view_ = static_cast<const unsigned char*>(view);
    }
  }

  void build_copy_lists() {
    const std::uint64_t n = request_.count;
    dsts_.resize(n);
    srcs_.resize(n);
    sizes_.assign(n, request_.bytes);
    for (std::uint64_t i = 0; i < n; ++i) {
      dsts_[i] = h2d() ? static_cast<void*>(device_piece(i)) : static_cast<void*>(host_piece(i));
      srcs_[i] = h2d() ? static_cast<void*>(host_piece(i)) : static_cast<void*>(device_piece(i));
    }
#if CUDART_VERSION >= 12080
    batch_attrs_ = cudaMemcpyAttributes{};
    batch_attrs_.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    batch_attrs_.flags = cudaMemcpyFlagDefault;
#endif
  }

  // h2d: piece i of the host holds bytes [i*S, (i+1)*S) of one pattern, so the contiguous device
  // destination must equal the pattern of N*S bytes. d2h: the device buffer holds that pattern.
  void fill_source() {
    if (h2d()) {
      std::memset(pieces_.get(), 0, pieces_.size());
      for (std::uint64_t i = 0; i < request_.count; ++i) {
        fill_pattern_at(host_piece(i), request_.bytes, i * request_.bytes, kSeed);
      }
    } else {
      fill_pattern_on_device(device_buffer_.get(), request_.batch_bytes(), kSeed, stream_->get());
      stream_->synchronize();
    }
  }

  void clear_destination() {
    if (h2d()) {
      PB_CUDA(cudaMemsetAsync(device_buffer_.get(), 0, request_.batch_bytes(), stream_->get()));
    } else {
      std::memset(pieces_.get(), 0, pieces_.size());
    }
    if (coalesced()) std::memset(staging_.get(), 0, staging_.size());
    stream_->synchronize();
  }

  void capture_graph() {
    const cudaStream_t s = stream_->get();
    PB_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    cudaError_t err = cudaSuccess;
    for (std::uint64_t i = 0; i < request_.count && err == cudaSuccess; ++i) {
      err = cudaMemcpyAsync(dsts_[i], srcs_[i], request_.bytes, kind(), s);
    }
    cudaGraph_t graph = nullptr;
    const cudaError_t end = cudaStreamEndCapture(s, &graph);
    graph_.reset(graph);
    PB_CUDA(err);
    PB_CUDA(end);
    std::size_t nodes = 0;
    PB_CUDA(cudaGraphGetNodes(graph_.get(), nullptr, &nodes));
    graph_nodes_ = nodes;
    cudaGraphExec_t exec = nullptr;
    PB_CUDA(cudaGraphInstantiateWithFlags(&exec, graph_.get(), 0));
    graph_exec_.reset(exec);
    PB_CUDA(cudaGraphUpload(graph_exec_.get(), s));
    stream_->synchronize();
  }

  cudaError_t memcpy_batch() {
#if CUDART_VERSION >= 13000
    return cudaMemcpyBatchAsync(dsts_.data(), srcs_.data(), sizes_.data(), request_.count,
                                &batch_attrs_, &batch_attr_index_, 1, stream_->get());
#elif CUDART_VERSION >= 12080
    std::size_t fail_index = std::numeric_limits<std::size_t>::max();
    return memcpy_batch_12x(&cudaMemcpyBatchAsync, dsts_.data(), srcs_.data(), sizes_.data(),
                            request_.count, &batch_attrs_, &batch_attr_index_, &fail_index,
                            stream_->get());
#else
    return cudaErrorNotSupported;
#endif
  }

  // A driver older than the runtime refuses cudaMemcpyBatchAsync: skip with the reason.
  void probe_batched() {
    const cudaError_t err = memcpy_batch();
    if (err == cudaErrorNotSupported || err == cudaErrorCallRequiresNewerDriver) {
      cudaGetLastError();
      throw SkipCase(std::string("cudaMemcpyBatchAsync is not available with this driver: ") +
                     cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
    }
    PB_CUDA(err);
    stream_->synchronize();
  }

  void launch_gather() {
    const std::uint64_t chunks_per_piece = (request_.bytes + kGatherChunk - 1) / kGatherChunk;
    const std::uint64_t total = chunks_per_piece * request_.count;
    const std::uint64_t max_blocks = static_cast<std::uint64_t>(std::max(sm_count_, 1)) * 8;
    const unsigned blocks = static_cast<unsigned>(std::min(total, max_blocks));
    gather_kernel<<<blocks, kGatherThreads, 0, stream_->get()>>>(
        pieces_device_view_, request_.piece_pitch(),
        reinterpret_cast<unsigned char*>(device_buffer_.get()), request_.bytes, chunks_per_piece,
        total);
    PB_CUDA(cudaGetLastError());
  }

  // Call `call` (0 .. api_calls_per_batch - 1) of one batch: exactly one CUDA API call.
  void issue(std::uint64_t call) {
    const cudaStream_t s = stream_->get();
    switch (request_.method) {
      case Method::kIndividual:
        PB_CUDA(cudaMemcpyAsync(dsts_[call], srcs_[call], request_.bytes, kind(), s));
        break;
      case Method::kCoalesced:
        if (h2d()) {
          PB_CUDA(cudaMemcpyAsync(device_buffer_.get(), staging_.get(), request_.batch_bytes(),
                                  cudaMemcpyHostToDevice, s));
        } else {
          PB_CUDA(cudaMemcpyAsync(staging_.get(), device_buffer_.get(), request_.batch_bytes(),
                                  cudaMemcpyDeviceToHost, s));
        }
        break;
      case Method::kBatched:
        PB_CUDA(memcpy_batch());
        break;
      case Method::kGraph:
        PB_CUDA(cudaGraphLaunch(graph_exec_.get(), s));
        break;
      case Method::kGatherKernel:
        launch_gather();
        break;
    }
  }

  // Coalesced: the host side of a batch. h2d packs the pieces into the staging buffer, d2h
  // unpacks the staging buffer into the pieces.
  void pack_once() {
    const std::uint64_t s = request_.bytes;
    for (std::uint64_t i = 0; i < request_.count; ++i) {
      if (h2d()) {
        std::memcpy(staging_.get() + i * s, host_piece(i), s);
      } else {
        std::memcpy(host_piece(i), staging_.get() + i * s, s);
      }
    }
    std::atomic_signal_fence(std::memory_order_seq_cst);  // each pass really happens
  }

  void pack(std::uint64_t batches, SampleTotals& t) {
    const double cpu0 = thread_cpu_seconds();
    t.pack_seconds += time_on_host([&] {
      for (std::uint64_t b = 0; b < batches; ++b) pack_once();
    });
    t.issue_cpu_seconds += thread_cpu_seconds() - cpu0;
  }

  // API calls per latched block: at most kMaxLatchedCalls, and at most kMaxLatchedCopies queued
  // copies, but at least one call.
  std::uint64_t calls_per_block() const {
    // A graph launch queues every one of its copy nodes at once: two launches of 256 copies
    // behind the latch already blocked the calling thread on the H200 (driver 580).
    if (request_.method == Method::kGraph) return 1;
    const std::uint64_t copies_per_call =
        request_.method == Method::kBatched || request_.method == Method::kGraph ? request_.count
                                                                                 : 1;
    return std::clamp<std::uint64_t>(kMaxLatchedCopies / copies_per_call, 1, kMaxLatchedCalls);
  }

  SampleTotals run_sample(std::uint64_t batches) {
    SampleTotals t;
    if (coalesced() && h2d()) pack(batches, t);
    const std::uint64_t per_batch = request_.api_calls_per_batch();
    const std::uint64_t total = batches * per_batch;
    const std::uint64_t block = calls_per_block();
    for (std::uint64_t first = 0; first < total; first += block) {
      const std::uint64_t last = std::min(total, first + block);
      t.copy_seconds += timer_->time_block(stream_->get(), [&] {
        const double cpu0 = thread_cpu_seconds();
        for (std::uint64_t c = first; c < last; ++c) {
          issue(c % per_batch);
          ++t.api_calls;
        }
        t.issue_cpu_seconds += thread_cpu_seconds() - cpu0;
      });
      ++t.blocks;
    }
    if (coalesced() && !h2d()) pack(batches, t);
    return t;
  }

  void verify_host_pieces() {
    const std::uint64_t s = request_.bytes;
    const std::uint64_t pitch = request_.piece_pitch();
    for (std::uint64_t i = 0; i < request_.count; ++i) {
      const std::byte* p = host_piece(i);
      if (const auto bad = find_mismatch_at(p, s, i * s, kSeed)) {
        throw CaseFailure("host piece " + std::to_string(i) + " of " +
                          std::to_string(request_.count) + " after the timed batches: byte " +
                          std::to_string(*bad) + " of " + std::to_string(s) +
                          " differs from the pattern");
      }
      // The gap after each piece must still be clear: a copy that overran its piece fails.
      for (std::uint64_t g = s; g < pitch; ++g) {
        if (p[g] != std::byte{0}) {
          throw CaseFailure("host piece " + std::to_string(i) + ": byte " + std::to_string(g - s) +
                            " of the gap after it was written (a copy overran its piece)");
        }
      }
    }
  }

  void record_memory_kind(const std::string& check, const std::string& name, const void* ptr,
                          bool must_be_mapped) {
    cudaPointerAttributes attr{};
    PB_CUDA(cudaPointerGetAttributes(&attr, ptr));
    bool passed = attr.type == cudaMemoryTypeHost;
    std::string detail = "CUDA reports the " + name + " as " + memory_type_name(attr.type) +
                         ", expected " + memory_type_name(cudaMemoryTypeHost);
    if (must_be_mapped) {
      passed = passed && attr.devicePointer != nullptr;
      detail += attr.devicePointer ? "; mapped into the device's address space"
                                   : "; not mapped into the device's address space";
    }
    checks_.push_back({check, passed, detail, memory_type_name(attr.type)});
  }

  void record_memory_checks() {
    record_memory_kind("host_memory_kind", "scattered host pieces", pieces_.get(),
                       request_.method == Method::kGatherKernel);
    if (coalesced()) {
      record_memory_kind("staging_memory_kind", "staging buffer", staging_.get(), false);
    }
    if (node_) {
      const int cpu = sched_getcpu();
      const bool on_node = std::find(cpus_.begin(), cpus_.end(), cpu) != cpus_.end();
      checks_.push_back({"thread_placement", on_node,
                         "issuing thread runs on CPU " + std::to_string(cpu) +
                             "; bound to the CPUs of the GPU's NUMA node " +
                             std::to_string(*node_) +
                             ", where the pinned buffers were allocated under MPOL_BIND",
                         cpu});
    } else {
      checks_.push_back({"thread_placement", true,
                         "the GPU's NUMA node is unknown or has no usable CPUs: the thread and the "
                         "pinned buffers were left where the OS puts them",
                         nullptr});
    }
  }

  Check copies_issued_check() const {
    const std::uint64_t expected = request_.api_calls_per_batch();
    const double measured =
        batches_ && samples_ ? static_cast<double>(last_api_calls_) / batches_ : 0.0;
    nlohmann::ordered_json value = {
        {"method", std::string(to_string(request_.method))},
        {"api_calls_per_batch", measured},
        {"expected_api_calls_per_batch", expected},
        {"copy_operations_per_batch", request_.copy_operations_per_batch()},
        {"kernel_launches_per_batch", request_.method == Method::kGatherKernel ? 1 : 0},
        {"host_memcpys_per_batch", coalesced() ? request_.count : 0},
    };
    std::string call;
    switch (request_.method) {
      case Method::kIndividual:
        call = std::to_string(expected) + " cudaMemcpyAsync of " + format_bytes(request_.bytes);
        break;
      case Method::kCoalesced:
        call = std::to_string(request_.count) + " host memcpy " + (h2d() ? "into" : "out of") +
               " the staging buffer and 1 cudaMemcpyAsync of " +
               format_bytes(request_.batch_bytes());
        break;
      case Method::kBatched:
        call = "1 cudaMemcpyBatchAsync of " + std::to_string(request_.count) + " copies of " +
               format_bytes(request_.bytes);
        break;
      case Method::kGraph:
        call = "1 cudaGraphLaunch of a graph with " + std::to_string(graph_nodes_) +
               " memcpy nodes of " + format_bytes(request_.bytes);
        value["graph_nodes"] = graph_nodes_;
        break;
      case Method::kGatherKernel:
        call = "1 gather kernel launch reading " + std::to_string(request_.count) + " pieces of " +
               format_bytes(request_.bytes) + " from mapped pinned memory";
        break;
    }
    bool passed = samples_ > 0 && !calls_mismatch_;
    if (request_.method == Method::kGraph && graph_nodes_ != request_.count) passed = false;
    std::string detail = "per batch: " + call;
    if (samples_ == 0) {
      detail += "; no sample was measured";
    } else if (calls_mismatch_) {
      detail += "; but the issuing code made a different number of calls in some sample";
    }
    return {"copies_issued", passed, detail, value};
  }

  Check timing_check() const {
    std::string detail = std::to_string(batches_) + " batches per sample, enqueued in " +
                         std::to_string(last_blocks_) + " latched blocks of at most " +
                         std::to_string(calls_per_block()) +
                         " API calls, each timed with CUDA events; time_per_batch = sum of the "
                         "block times / batches";
    if (coalesced()) {
      detail += std::string(" + the host ") + (h2d() ? "packing" : "unpacking") +
                " (steady clock, synchronous CPU work on the batch's path) / batches";
    }
    detail += "; issue_cpu_time = thread CPU time of the issuing calls";
    if (coalesced()) detail += " and the (un)packing";
    nlohmann::ordered_json value;
    value["batches_per_sample"] = batches_;
    value["latched_blocks_per_sample"] = last_blocks_;
    value["max_api_calls_per_block"] = calls_per_block();
    return {"batch_timing", true, detail, value};
  }

  SmallCopiesRequest request_;
  int device_;
  std::optional<int> node_;
  std::vector<int> cpus_;
  std::optional<ThreadAffinityScope> affinity_;  // first in, last out: restores the thread
  int sm_count_ = 1;
  std::optional<Stream> stream_;
  std::optional<GpuBlockTimer> timer_;
  std::optional<DevicePatternChecker> checker_;
  PinnedHostMemory pieces_;   // N pieces, one every piece_pitch() bytes
  PinnedHostMemory staging_;  // coalesced: N*S contiguous
  DeviceMemory device_buffer_;
  const unsigned char* pieces_device_view_ = nullptr;  // gather_kernel: mapped view of pieces_
  std::vector<void*> dsts_, srcs_;
  std::vector<std::size_t> sizes_;
#if CUDART_VERSION >= 12080
  cudaMemcpyAttributes batch_attrs_{};
  std::size_t batch_attr_index_ = 0;
#endif
  GraphPtr graph_;
  GraphExecPtr graph_exec_;  // declared after graph_: destroyed first
  std::uint64_t graph_nodes_ = 0;
  std::uint64_t batches_ = 1;
  std::uint64_t samples_ = 0;
  std::uint64_t last_api_calls_ = 0;
  std::uint64_t last_blocks_ = 0;
  bool calls_mismatch_ = false;
  bool verified_ = false;
  std::vector<Check> checks_;
};

class SmallCopiesFamily final : public SmallCopiesFamilyBase {
 public:
  SmallCopiesFamily() : SmallCopiesFamilyBase(batched_unavailable_in_this_build()) {}
  std::unique_ptr<CaseBench> prepare(const CaseSpec& spec, const Machine& machine,
                                     int device) const override {
    return std::make_unique<SmallCopiesBench>(spec, machine, device);
  }
};

}  // namespace

std::unique_ptr<Family> make_small_copies_family() { return std::make_unique<SmallCopiesFamily>(); }

}  // namespace pathbench
