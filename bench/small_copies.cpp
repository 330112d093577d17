#include "bench/small_copies.hpp"

#include <algorithm>

#include "measure/gpu_bench.hpp"
#include "scenario/typed_axis.hpp"

namespace pathbench {

namespace {

constexpr std::uint64_t kMaxLatchedCalls = 256;
constexpr std::uint64_t kMaxLatchedCopies = 1024;

using Method = SmallCopiesRequest::Method;
using Direction = SmallCopiesRequest::Direction;

const EnumAxis<Method> kMethod{
    "method",
    {{"individual", Method::kIndividual},
     {"coalesced", Method::kCoalesced},
     {"batched", Method::kBatched},
     {"graph", Method::kGraph},
     {"gather_kernel", Method::kGatherKernel}},
    "individual: N cudaMemcpyAsync; coalesced: pack on the host, one copy of N*S; batched: one "
    "cudaMemcpyBatchAsync (CUDA 12.8+); graph: a CUDA graph of the N copies; gather_kernel: a "
    "kernel reading the pieces from mapped pinned memory (h2d only)"};
const IntegerAxis kCount{"count", 1, 65536, "pieces per batch (N)"};
const IntegerAxis kBytes{"bytes", 1, std::int64_t{64} << 20, "bytes per piece (S)"};
const EnumAxis<Direction> kDirection{
    "direction",
    {{"h2d", Direction::kH2D}, {"d2h", Direction::kD2H}},
    "h2d (default): scattered pinned host pieces to one contiguous device buffer; d2h: the "
    "reverse"};

class SmallCopiesFamily final : public DeclaredFamily {
 public:
  explicit SmallCopiesFamily(int cuda_runtime)
      : DeclaredFamily({"small_copies",
                        "N copies of S bytes from scattered pinned host pieces: N cudaMemcpyAsync "
                        "vs one copy packed on the host vs cudaMemcpyBatchAsync vs a CUDA graph "
                        "vs a gather kernel over mapped memory; time per batch, GB/s, API calls "
                        "and CPU time spent issuing",
                        axis_schemas(kMethod, kCount, kBytes, kDirection),
                        {"method", "count", "bytes"}}),
        cuda_runtime_(cuda_runtime) {}

  std::optional<std::string> invalid_combination(const CaseSpec& spec) const override {
    const SmallCopiesRequest r = decode_small_copies_request(spec);
    if (r.method != Method::kGatherKernel || r.direction == Direction::kH2D) return std::nullopt;
    return "gather_kernel reads mapped host memory into device memory: it has no d2h form (use "
           "direction h2d)";
  }

  MemoryNeeds memory_needs(const CaseSpec& spec) const override {
    const SmallCopiesRequest r = decode_small_copies_request(spec);
    return {r.host_bytes(), r.batch_bytes()};
  }

  Requirements requirements(const CaseSpec& spec) const override {
    Requirements needs;
    needs.gpu();
    if (kMethod.decode(spec) == Method::kBatched) {
      needs.cuda_runtime(12080, "cudaMemcpyBatchAsync", cuda_runtime_);  // CUDA 12.8
    }
    return needs;
  }

  std::optional<std::vector<std::string>> metric_names(const CaseSpec& spec) const override {
    return metric_names_of(small_copies_metrics(decode_small_copies_request(spec)));
  }

  std::unique_ptr<CaseBench> prepare(const CaseSpec& spec, const Machine& machine,
                                     int device) const override {
    PATHBENCH_GPU_BENCH(
        make_small_copies_bench(decode_small_copies_request(spec), machine, device));
  }

 private:
  int cuda_runtime_;
};

}  // namespace

std::string_view to_string(SmallCopiesRequest::Method m) { return kMethod.name_of(m); }

std::uint64_t SmallCopiesRequest::calls_per_block() const {
  // A latched block must be enqueued while the latch holds the stream; a few hundred calls and
  // about a thousand queued copies stay inside the driver's queue, so enqueueing never blocks. Two
  // graph launches of 256 copies behind the latch already blocked the calling thread on the H200
  // (driver 580).
  if (method == Method::kGraph) return 1;
  const std::uint64_t copies_per_call = method == Method::kBatched ? count : 1;
  return std::clamp<std::uint64_t>(kMaxLatchedCopies / copies_per_call, 1, kMaxLatchedCalls);
}

std::uint64_t SmallCopiesRequest::probe_batches() const {
  return std::clamp<std::uint64_t>(kMaxLatchedCalls / api_calls_per_batch(), 1, 4);
}

SmallCopiesRequest decode_small_copies_request(const CaseSpec& spec) {
  return {kMethod.decode(spec), kDirection.decode_or(spec, Direction::kH2D),
          static_cast<std::uint64_t>(kCount.decode(spec)),
          static_cast<std::uint64_t>(kBytes.decode(spec))};
}

std::vector<MetricSpec> small_copies_metrics(const SmallCopiesRequest& r) {
  std::vector<MetricSpec> m = {{"time_per_batch", "s", Better::kLower},
                               {"bandwidth", "GB/s", Better::kHigher},
                               {"api_calls_per_batch", "calls", Better::kLower},
                               {"issue_cpu_time", "s", Better::kLower}};
  if (r.method != Method::kCoalesced) return m;
  m.push_back({"pack_time", "s", Better::kLower});
  m.push_back({"copy_time", "s", Better::kLower});
  return m;
}

std::unique_ptr<Family> make_small_copies_family(int cuda_runtime) {
  return std::make_unique<SmallCopiesFamily>(cuda_runtime);
}

}  // namespace pathbench
