// The `small_copies` bench. A sample is k batches, not one block: their calls go in latched blocks
// of at most calls_per_block() (N individual copies may span blocks), each timed by the
// LatchedClock, the times summed: time_per_batch is the GPU's time to perform a batch once queued,
// never the host's issue time (issue_cpu_time, the thread CPU time of the issuing calls).
// coalesced: the host (un)packing between the pieces and the staging buffer is synchronous CPU work
// on the batch's path, so time_per_batch = pack_time (host clock around k packs, / k) + copy_time
// (the latched copies, / k), and issue_cpu_time includes the packing.
#include <algorithm>
#include <atomic>
#include <cstring>

#include "bench/small_copies.hpp"
#include "core/host_clock.hpp"
#include "core/units.hpp"
#include "cuda/cuda_graph.hpp"
#include "cuda/device_pattern.hpp"
#include "cuda/memcpy_batch.hpp"
#include "cuda/pitched_gather.hpp"
#include "measure/latched_clock.hpp"
#include "measure/pattern.hpp"
#include "measure/placed_host_memory.hpp"
#include "placement/thread_placement.hpp"

namespace pathbench {

namespace {

constexpr std::uint64_t kSeed = 0x736d616c6cu;  // "small"
constexpr std::uint64_t kMaxBatchesPerSample = 20000;
using Method = SmallCopiesRequest::Method;

struct SampleTotals {  // one sample's, over k batches
  double copy_seconds = 0, pack_seconds = 0, issue_cpu_seconds = 0;
  std::uint64_t api_calls = 0;  // CUDA API calls the issuing code made
};

class SmallCopiesBench final : public CaseBench {
 public:
  SmallCopiesBench(const SmallCopiesRequest& r, const Machine& machine, int device)
      : r_(r),
        device_(make_current(device)),
        thread_(machine, machine.gpu_local_node(device)),
        device_buffer_(r.batch_bytes()) {
    const unsigned flags = gather() ? cudaHostAllocMapped : cudaHostAllocDefault;
    pieces_ = PlacedHostMemory(
        {HostMemoryKind::kPinned, r.count * r.piece_pitch(), {}, thread_.node(), flags});
    checks_ = pieces_.checks("scattered host pieces");
    if (coalesced()) {
      staging_ = PlacedHostMemory({HostMemoryKind::kPinned, r.batch_bytes(), {}, thread_.node()});
      checks_.push_back(
          host_memory_kind_check(staging_.data(), cudaMemoryTypeHost, "staging buffer"));
      checks_.back().name = "staging_memory_kind";
    }
    checks_.push_back(thread_.check("issuing thread"));
    if (gather()) {
      void* view = nullptr;  // the device's address of the mapped pieces
      PB_CUDA(cudaHostGetDevicePointer(&view, pieces_.data(), 0));
      gather_ = PitchedGather(static_cast<const std::byte*>(view), r.piece_pitch(),
                              device_buffer_.get(), r.bytes, r.count);
    }
    for (std::uint64_t i = 0; i < r.count; ++i) {
      void* host = pieces_.data() + i * r.piece_pitch();
      void* dev = device_buffer_.get() + i * r.bytes;
      dsts_.push_back(h2d() ? dev : host);
      srcs_.push_back(h2d() ? host : dev);
    }
    // h2d: piece i holds bytes [i*S, (i+1)*S) of one pattern, so the contiguous device buffer
    // must end up equal to the pattern of N*S bytes. d2h: the device buffer holds that pattern.
    if (h2d()) fill_pattern_pieces(pieces(), kSeed);
    if (!h2d()) fill_pattern_on_device(device_buffer_.get(), r.batch_bytes(), kSeed, stream_.get());
    stream_.synchronize();
    if (r.method == Method::kGraph) {
      graph_ = CapturedGraph(stream_.get(), [&] {
        cudaError_t err = cudaSuccess;
        for (std::uint64_t i = 0; i < r.count && err == cudaSuccess; ++i)
          err = cudaMemcpyAsync(dsts_[i], srcs_[i], r.bytes, kind(), stream_.get());
        return err;
      });
    }
    if (r.method == Method::kBatched) {
      batch_ = MemcpyBatch(dsts_, srcs_, std::vector<std::size_t>(r.count, r.bytes));
      batch_.probe(stream_.get());
    }
  }

  TimingMethod timing_method() const override { return clock_.method(); }
  std::vector<MetricSpec> metrics() const override { return small_copies_metrics(r_); }

  void warm_up(double min_time) override {
    clear_destination();
    run_sample(1);  // first touch of the path (graph upload, driver set-up); the latch probe
    const std::uint64_t probe = r_.probe_batches();
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
    if (t.api_calls != batches_ * r_.api_calls_per_batch()) calls_mismatch_ = true;
    const double seconds = t.copy_seconds + t.pack_seconds;
    const double per_batch = seconds / k;
    Sample s{seconds,
             {per_batch, static_cast<double>(r_.batch_bytes()) / per_batch / kGB,
              static_cast<double>(t.api_calls) / k, t.issue_cpu_seconds / k}};
    if (coalesced()) s.values.insert(s.values.end(), {t.pack_seconds / k, t.copy_seconds / k});
    return s;
  }

  void verify() override {
    if (h2d()) {
      checker_.verify(device_buffer_.get(), r_.batch_bytes(), kSeed, stream_.get(),
                      "contiguous device destination after the timed batches");
    } else {
      verify_pattern_pieces(pieces(), kSeed, "host pieces after the timed batches");
    }
    ++verified_;
  }

  std::vector<Check> checks() const override {
    std::vector<Check> all = checks_;
    all.push_back({"copy_pattern", verified_ > 0,
                   verified_ > 0 ? "destination matched the pattern after every sample"
                                 : "no sample was verified",
                   verified_});
    all.push_back(copies_issued_check());
    all.push_back({"batch_timing", true, timing_detail(), nlohmann::ordered_json::object()});
    all.back().value["batches_per_sample"] = batches_;
    all.back().value["latched_blocks_per_sample"] = blocks(batches_);
    all.back().value["max_api_calls_per_block"] = r_.calls_per_block();
    return all;
  }

  std::uint64_t operations_per_sample() const override { return batches_; }
  std::uint64_t bytes_per_sample() const override { return r_.batch_bytes() * batches_; }

  std::string timing_detail() const override {
    const std::string pack = std::string(" + the host ") + (h2d() ? "packing" : "unpacking") +
                             " (steady clock, synchronous CPU work on the batch's path)";
    return std::to_string(batches_) + " batches per sample, enqueued in " +
           std::to_string(blocks(batches_)) + " latched blocks of at most " +
           std::to_string(r_.calls_per_block()) + " API calls (" + clock_.describe() +
           "); time_per_batch = sum of the block times" + (coalesced() ? pack : "") +
           " / batches; issue_cpu_time = thread CPU time of the issuing calls" +
           (coalesced() ? " and the (un)packing" : "");
  }

 private:
  bool coalesced() const { return r_.method == Method::kCoalesced; }
  bool gather() const { return r_.method == Method::kGatherKernel; }
  bool h2d() const { return r_.direction == SmallCopiesRequest::Direction::kH2D; }
  cudaMemcpyKind kind() const { return h2d() ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost; }
  PatternPieces pieces() const { return {pieces_.data(), r_.count, r_.bytes, r_.piece_pitch()}; }

  void clear_destination() {
    if (h2d()) PB_CUDA(cudaMemsetAsync(device_buffer_.get(), 0, r_.batch_bytes(), stream_.get()));
    if (!h2d()) std::memset(pieces_.data(), 0, pieces_.size());
    if (coalesced()) std::memset(staging_.data(), 0, staging_.size());
    stream_.synchronize();
  }

  // Call `call` (0 .. api_calls_per_batch - 1) of one batch: exactly one CUDA API call.
  void issue(std::uint64_t call) {
    const cudaStream_t s = stream_.get();
    switch (r_.method) {
      case Method::kIndividual:
        PB_CUDA(cudaMemcpyAsync(dsts_[call], srcs_[call], r_.bytes, kind(), s));
        break;
      case Method::kCoalesced:
        PB_CUDA(cudaMemcpyAsync(h2d() ? device_buffer_.get() : staging_.data(),
                                h2d() ? staging_.data() : device_buffer_.get(), r_.batch_bytes(),
                                kind(), s));
        break;
      case Method::kBatched:
        PB_CUDA(batch_.enqueue(s));
        break;
      case Method::kGraph:
        graph_.launch(s);
        break;
      case Method::kGatherKernel:
        gather_.launch(s);
        break;
    }
  }

  // coalesced: k batches' host side, h2d packing the pieces into the staging buffer, d2h unpacking.
  void pack(std::uint64_t batches, SampleTotals& t) {
    const double cpu0 = thread_cpu_seconds();
    const auto passes = [&] {
      for (std::uint64_t b = 0; b < batches; ++b) {
        for (std::uint64_t i = 0; i < r_.count; ++i) {
          std::byte* staged = staging_.data() + i * r_.bytes;
          std::byte* piece = pieces_.data() + i * r_.piece_pitch();
          std::memcpy(h2d() ? staged : piece, h2d() ? piece : staged, r_.bytes);
        }
        std::atomic_signal_fence(std::memory_order_seq_cst);  // each pass really happens
      }
    };
    t.pack_seconds += pack_clock_.time(passes).front();
    t.issue_cpu_seconds += thread_cpu_seconds() - cpu0;
  }

  std::uint64_t blocks(std::uint64_t batches) const {
    return (batches * r_.api_calls_per_batch() + r_.calls_per_block() - 1) / r_.calls_per_block();
  }

  SampleTotals run_sample(std::uint64_t batches) {
    SampleTotals t;
    if (coalesced() && h2d()) pack(batches, t);
    const std::uint64_t per_batch = r_.api_calls_per_batch(), total = batches * per_batch;
    const std::uint64_t calls = r_.calls_per_block();
    for (std::uint64_t first = 0; first < total; first += calls) {
      const std::uint64_t last = std::min(total, first + calls);
      const auto block = [&] {
        const double cpu0 = thread_cpu_seconds();
        for (std::uint64_t c = first; c < last; ++c, ++t.api_calls) issue(c % per_batch);
        t.issue_cpu_seconds += thread_cpu_seconds() - cpu0;
      };
      t.copy_seconds += clock_.time(block).front();
    }
    if (coalesced() && !h2d()) pack(batches, t);
    return t;
  }

  Check copies_issued_check() const {
    const std::string n = std::to_string(r_.count), piece = " of " + format_bytes(r_.bytes);
    std::string detail =
        r_.method == Method::kIndividual ? n + " cudaMemcpyAsync" + piece
        : coalesced()
            ? n + " host memcpy " + (h2d() ? "into" : "out of") +
                  " the staging buffer and 1 cudaMemcpyAsync of " + format_bytes(r_.batch_bytes())
        : r_.method == Method::kBatched ? "1 cudaMemcpyBatchAsync of " + n + " copies" + piece
        : r_.method == Method::kGraph
            ? "1 cudaGraphLaunch of " + std::to_string(graph_.nodes()) + " memcpy nodes" + piece
            : "1 gather kernel launch reading " + n + " pieces" + piece + " from mapped memory";
    nlohmann::ordered_json value = {
        {"method", std::string(to_string(r_.method))},
        {"api_calls_per_batch", samples_ ? static_cast<double>(last_api_calls_) / batches_ : 0.0},
        {"expected_api_calls_per_batch", r_.api_calls_per_batch()},
        {"copy_operations_per_batch", r_.copy_operations_per_batch()},
        {"kernel_launches_per_batch", gather() ? 1 : 0},
        {"host_memcpys_per_batch", coalesced() ? r_.count : 0}};
    if (r_.method == Method::kGraph) value["graph_nodes"] = graph_.nodes();
    const bool graph_ok = r_.method != Method::kGraph || graph_.nodes() == r_.count;
    if (samples_ == 0) detail += "; no sample was measured";
    if (calls_mismatch_) detail += "; but the issuing code made a different number of calls";
    const bool passed = samples_ > 0 && !calls_mismatch_ && graph_ok;
    return {"copies_issued", passed, "per batch: " + detail, value};
  }

  SmallCopiesRequest r_;
  int device_;              // current before anything of the case is created
  ThreadPlacement thread_;  // on the GPU's node, where the pinned buffers are allocated
  Stream stream_;
  LatchedClock clock_{stream_.get()};
  HostClock pack_clock_;
  DevicePatternChecker checker_;
  PlacedHostMemory pieces_;   // N pieces, one every piece_pitch() bytes
  PlacedHostMemory staging_;  // coalesced: N*S contiguous
  DeviceMemory device_buffer_;
  std::vector<void*> dsts_, srcs_;
  MemcpyBatch batch_;
  CapturedGraph graph_;
  PitchedGather gather_;
  std::uint64_t batches_ = 1, samples_ = 0, verified_ = 0, last_api_calls_ = 0;
  bool calls_mismatch_ = false;
  std::vector<Check> checks_;
};

}  // namespace

std::unique_ptr<CaseBench> make_small_copies_bench(const SmallCopiesRequest& r,
                                                   const Machine& machine, int device) {
  return std::make_unique<SmallCopiesBench>(r, machine, device);
}

}  // namespace pathbench
