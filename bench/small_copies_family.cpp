#include "bench/small_copies_family.hpp"

#include "core/units.hpp"

namespace pathbench {

namespace {

constexpr std::uint64_t kPieceAlign = 4096;
constexpr std::uint64_t kPieceGap = 4096;

using Method = SmallCopiesRequest::Method;
using Direction = SmallCopiesRequest::Direction;

}  // namespace

std::string_view to_string(SmallCopiesRequest::Method m) {
  switch (m) {
    case Method::kIndividual:
      return "individual";
    case Method::kCoalesced:
      return "coalesced";
    case Method::kBatched:
      return "batched";
    case Method::kGraph:
      return "graph";
    case Method::kGatherKernel:
      return "gather_kernel";
  }
  return "unknown";
}

std::uint64_t SmallCopiesRequest::piece_pitch() const {
  return (bytes + kPieceAlign - 1) / kPieceAlign * kPieceAlign + kPieceGap;
}

std::uint64_t SmallCopiesRequest::api_calls_per_batch() const {
  return method == Method::kIndividual ? count : 1;
}

std::uint64_t SmallCopiesRequest::copy_operations_per_batch() const {
  switch (method) {
    case Method::kCoalesced:
      return 1;
    case Method::kGatherKernel:
      return 0;
    default:
      return count;
  }
}

std::uint64_t SmallCopiesRequest::host_bytes() const {
  return count * piece_pitch() + (method == Method::kCoalesced ? batch_bytes() : 0);
}

SmallCopiesRequest decode_small_copies_request(const CaseSpec& spec) {
  SmallCopiesRequest r;
  const std::string method = spec.str("method");
  r.method = method == "coalesced"       ? Method::kCoalesced
             : method == "batched"       ? Method::kBatched
             : method == "graph"         ? Method::kGraph
             : method == "gather_kernel" ? Method::kGatherKernel
                                         : Method::kIndividual;
  if (spec.has("direction") && spec.str("direction") == "d2h") r.direction = Direction::kD2H;
  r.count = static_cast<std::uint64_t>(spec.integer("count"));
  r.bytes = static_cast<std::uint64_t>(spec.integer("bytes"));
  return r;
}

std::string_view SmallCopiesFamilyBase::description() const {
  return "N copies of S bytes from scattered pinned host pieces: N cudaMemcpyAsync vs one "
         "coalesced copy packed on the host vs cudaMemcpyBatchAsync vs a CUDA graph of the N "
         "copies vs a gather kernel reading mapped pinned memory; time per batch, GB/s, API calls "
         "and CPU time spent issuing";
}

const std::vector<AxisSchema>& SmallCopiesFamilyBase::axes() const {
  static const std::vector<AxisSchema> kAxes = {
      {"method",
       AxisSchema::Kind::kString,
       {"individual", "coalesced", "batched", "graph", "gather_kernel"},
       0,
       0,
       "individual: N cudaMemcpyAsync; coalesced: pack on the host, one copy of N*S; batched: one "
       "cudaMemcpyBatchAsync (CUDA 12.8+); graph: a CUDA graph of the N copies; gather_kernel: "
       "a kernel reading the pieces from mapped pinned memory (h2d only)"},
      {"count", AxisSchema::Kind::kInteger, {}, 1, kSmallCopiesMaxCount, "pieces per batch (N)"},
      {"bytes", AxisSchema::Kind::kInteger, {}, 1, kSmallCopiesMaxBytes, "bytes per piece (S)"},
      {"direction",
       AxisSchema::Kind::kString,
       {"h2d", "d2h"},
       0,
       0,
       "h2d (default): scattered pinned host pieces to one contiguous device buffer; d2h: the "
       "reverse"},
  };
  return kAxes;
}

std::vector<std::string> SmallCopiesFamilyBase::required_axes() const {
  return {"method", "count", "bytes"};
}

std::optional<std::string> SmallCopiesFamilyBase::invalid_combination(const CaseSpec& spec) const {
  for (const auto& axis : required_axes()) {
    if (!spec.has(axis)) return "small_copies needs a " + axis + " axis";
  }
  for (const auto& axis : {"count", "bytes"}) {
    if (!spec.params.at(axis).is_number_integer()) return std::string(axis) + " must be an integer";
  }
  const std::int64_t count = spec.integer("count");
  const std::int64_t bytes = spec.integer("bytes");
  if (count < 1 || count > kSmallCopiesMaxCount) {
    return "count " + std::to_string(count) + " is outside 1 .. " +
           std::to_string(kSmallCopiesMaxCount);
  }
  if (bytes < 1 || bytes > kSmallCopiesMaxBytes) {
    return "bytes " + std::to_string(bytes) + " is outside 1 .. " +
           std::to_string(kSmallCopiesMaxBytes);
  }
  const SmallCopiesRequest r = decode_small_copies_request(spec);
  if (r.method == Method::kGatherKernel && r.direction == Direction::kD2H) {
    return "gather_kernel reads mapped host memory into device memory: it has no d2h form "
           "(use direction h2d)";
  }
  return std::nullopt;
}

std::vector<MetricSpec> small_copies_metrics(const SmallCopiesRequest& r) {
  std::vector<MetricSpec> m = {{"time_per_batch", "s", Better::kLower},
                               {"bandwidth", "GB/s", Better::kHigher},
                               {"api_calls_per_batch", "calls", Better::kLower},
                               {"issue_cpu_time", "s", Better::kLower}};
  if (r.method == SmallCopiesRequest::Method::kCoalesced) {
    m.push_back({"pack_time", "s", Better::kLower});
    m.push_back({"copy_time", "s", Better::kLower});
  }
  return m;
}

std::optional<std::vector<std::string>> SmallCopiesFamilyBase::metric_names(
    const CaseSpec& spec) const {
  return metric_names_of(small_copies_metrics(decode_small_copies_request(spec)));
}

MemoryNeeds SmallCopiesFamilyBase::memory_needs(const CaseSpec& spec) const {
  const SmallCopiesRequest r = decode_small_copies_request(spec);
  MemoryNeeds needs;
  needs.host_bytes = r.host_bytes();
  needs.device_bytes = r.batch_bytes();
  return needs;
}

Requirements SmallCopiesFamilyBase::requirements(const CaseSpec& spec) const {
  Requirements needs;
  needs.gpu();
  if (decode_small_copies_request(spec).method == Method::kBatched && !batched_unavailable_.empty()) {
    needs.custom([why = batched_unavailable_](const Machine&, int) { return std::optional(why); });
  }
  return needs;
}

}  // namespace pathbench
