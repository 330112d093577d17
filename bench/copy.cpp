#include "bench/copy.hpp"

#include "measure/gpu_bench.hpp"
#include "scenario/typed_axis.hpp"

namespace pathbench {

namespace {

const EnumAxis<CopyMeasure> kMeasure{
    "measure",
    {{"bandwidth", CopyMeasure::kBandwidth},
     {"latency", CopyMeasure::kLatency},
     {"alloc_cost", CopyMeasure::kAllocCost}},
    "bandwidth: GB/s of a block of copies; latency: time per small copy and round trip; "
    "alloc_cost: seconds per GiB to pin or register host memory"};
const EnumAxis<CopyDirection> kDirection{
    "direction",
    {{"h2d", CopyDirection::kH2D},
     {"d2h", CopyDirection::kD2H},
     {"d2d", CopyDirection::kD2D},
     {"bidir", CopyDirection::kBidir}},
    "copy direction; bidir: H2D and D2H at once (each direction's rate and the sum)"};
const EnumAxis<CopyHostMemory> kHostMemory{
    "host_memory",
    {{"pageable-4k", CopyHostMemory::kPageable4K},
     {"pageable-thp", CopyHostMemory::kPageableThp},
     {"pinned", CopyHostMemory::kPinned},
     {"registered-4k", CopyHostMemory::kRegistered4K},
     {"registered-thp", CopyHostMemory::kRegisteredThp},
     {"registered-hugetlb", CopyHostMemory::kRegisteredHugetlb}},
    "how the host buffer is allocated"};
const EnumAxis<bool> kHostNode{
    "host_node",
    {{"local", false}, {"remote", true}},
    "host buffer and measuring thread on the GPU's NUMA node, or on another one"};
const IntegerAxis kBytes{"bytes", 1, std::int64_t{1} << 36, "bytes per copy"};
const EnumAxis<bool> kGpus{
    "gpus",
    {{"one", false}, {"all", true}},
    "one: the --device GPU (the default when the axis is absent); all: every selected GPU (run "
    "--devices) at once, each with a host buffer on its own NUMA node, reported per GPU and "
    "summed"};

// What a gpus=all case cannot be: it measures concurrent bandwidth between host and GPUs, with
// memory the copy engines read or write directly.
std::optional<std::string> invalid_all_gpus(const CopyRequest& r) {
  if (r.measure != CopyMeasure::kBandwidth) {
    return "gpus=all measures bandwidth only (latency and alloc_cost are per-GPU measures)";
  }
  if (!r.direction || r.direction == CopyDirection::kD2D || r.direction == CopyDirection::kBidir) {
    return "gpus=all copies between the host and every GPU: direction must be h2d or d2h";
  }
  if (!r.host || r.pageable()) {
    return "gpus=all needs host_memory pinned or registered-*: pageable copies are staged by "
           "the driver through the calling thread, so they cannot run on all GPUs at once";
  }
  if (r.remote) {
    return "gpus=all puts each GPU's host buffer on that GPU's own NUMA node: host_node=remote "
           "does not apply";
  }
  return std::nullopt;
}

class CopyFamily final : public DeclaredFamily {
 public:
  CopyFamily()
      : DeclaredFamily({"copy",
                        "H2D / D2H / D2D copy bandwidth and latency over sizes and host memory "
                        "kinds, the cost of pinning (cudaMallocHost) and registering "
                        "(cudaHostRegister) host memory, and H2D / D2H to every GPU at once "
                        "(gpus=all: GPUs sharing a PCIe switch or root port show up)",
                        axis_schemas(kMeasure, kDirection, kHostMemory, kHostNode, kBytes, kGpus),
                        {"measure", "bytes"}}) {}

  std::optional<std::string> invalid_combination(const CaseSpec& spec) const override {
    const CopyRequest r = decode_copy_request(spec);
    if (r.all_gpus) return invalid_all_gpus(r);
    if (r.measure == CopyMeasure::kAllocCost) {
      if (r.direction) return "alloc_cost copies nothing: drop the direction axis";
      if (!r.host || r.pageable()) return "alloc_cost needs host_memory pinned or registered-*";
      return std::nullopt;
    }
    if (!r.direction) return "bandwidth and latency need a direction axis";
    if (r.direction == CopyDirection::kD2D) {
      if (r.host || kHostNode.present(spec)) {
        return "d2d has no host buffer: host_memory and host_node do not apply";
      }
      return std::nullopt;
    }
    if (!r.host) return "h2d, d2h and bidir need a host_memory axis";
    if (r.direction == CopyDirection::kBidir) {
      if (r.measure != CopyMeasure::kBandwidth) {
        return "bidir measures bandwidth (latency is one copy at a time: use h2d or d2h)";
      }
      if (r.pageable()) {
        return "bidir needs host_memory pinned or registered-*: the driver stages pageable copies "
               "synchronously through the calling thread, so the two directions could not overlap";
      }
    }
    return std::nullopt;
  }

  MemoryNeeds memory_needs(const CaseSpec& spec) const override {
    const CopyRequest r = decode_copy_request(spec);
    if (r.measure == CopyMeasure::kAllocCost) return {r.bytes, 0};
    if (r.direction == CopyDirection::kD2D) return {0, 2 * r.bytes};
    if (r.direction == CopyDirection::kBidir) return {2 * r.bytes, 2 * r.bytes};
    return {r.bytes, r.bytes};
  }

  Requirements requirements(const CaseSpec& spec) const override {
    const CopyRequest r = decode_copy_request(spec);
    Requirements needs;
    if (r.all_gpus) {
      needs.every_selected_gpu(r.bytes).numa_node_of_every_selected_gpu().host_memory_per_gpu(
          r.bytes);
    } else {
      needs.gpu();
    }
    if (!r.host) return needs;
    if (r.page() == PageType::kThp) needs.transparent_huge_pages();
    if (r.page() == PageType::kHugetlb)
      needs.hugetlb_pages(r.bytes, r.direction == CopyDirection::kBidir ? 2 : 1, r.all_gpus);
    if (!r.all_gpus) needs.gpu_numa_node(r.remote);
    return needs;
  }

  std::optional<std::vector<std::string>> metric_names(const CaseSpec& spec) const override {
    return metric_names_of(copy_metrics(decode_copy_request(spec), {"<N>"}));
  }

  std::unique_ptr<CaseBench> prepare(const CaseSpec& spec, const Machine& machine,
                                     int device) const override {
    const CopyRequest r = decode_copy_request(spec);
    if (r.all_gpus) PATHBENCH_GPU_BENCH(make_copy_all_gpus_bench(r, machine));
    PATHBENCH_GPU_BENCH(make_copy_bench(r, machine, device));
  }
};

}  // namespace

bool CopyRequest::pageable() const {
  return host == CopyHostMemory::kPageable4K || host == CopyHostMemory::kPageableThp;
}

std::optional<PageType> CopyRequest::page() const {
  if (!host || *host == CopyHostMemory::kPinned) return std::nullopt;
  switch (*host) {
    case CopyHostMemory::kPageableThp:
    case CopyHostMemory::kRegisteredThp:
      return PageType::kThp;
    case CopyHostMemory::kRegisteredHugetlb:
      return PageType::kHugetlb;
    default:
      return PageType::k4K;
  }
}

CopyRequest decode_copy_request(const CaseSpec& spec) {
  CopyRequest r;
  r.measure = kMeasure.decode(spec);
  r.direction = kDirection.decode_optional(spec);
  r.host = kHostMemory.decode_optional(spec);
  r.remote = kHostNode.decode_or(spec, false);
  r.all_gpus = kGpus.decode_or(spec, false);
  r.bytes = static_cast<std::uint64_t>(kBytes.decode(spec));
  return r;
}

std::vector<MetricSpec> copy_metrics(const CopyRequest& r,
                                     const std::vector<std::string>& gpu_labels) {
  if (r.all_gpus) {
    std::vector<MetricSpec> m = {{"bandwidth", "GB/s", Better::kHigher}};
    for (const auto& label : gpu_labels) {
      m.push_back({"bandwidth_gpu" + label, "GB/s", Better::kHigher});
    }
    m.push_back({"time_per_copy", "s", Better::kLower});
    return m;
  }
  if (r.direction == CopyDirection::kBidir) {
    return {{"bandwidth", "GB/s", Better::kHigher},
            {"bandwidth_h2d", "GB/s", Better::kHigher},
            {"bandwidth_d2h", "GB/s", Better::kHigher},
            {"time_per_copy", "s", Better::kLower}};
  }
  switch (r.measure) {
    case CopyMeasure::kBandwidth:
      return {{"bandwidth", "GB/s", Better::kHigher}, {"time_per_copy", "s", Better::kLower}};
    case CopyMeasure::kLatency:
      return {{"time_per_copy", "s", Better::kLower}, {"round_trip_time", "s", Better::kLower}};
    case CopyMeasure::kAllocCost:
      return {{"seconds_per_gib", "s/GiB", Better::kLower}};
  }
  return {};
}

std::vector<int> copy_all_gpus(const Machine& machine) { return gpus_in_use(machine); }

std::unique_ptr<Family> make_copy_family() { return std::make_unique<CopyFamily>(); }

}  // namespace pathbench
