#include "bench/copy_family.hpp"

#include <algorithm>

#include "core/units.hpp"

namespace pathbench {

std::string_view CopyFamilyBase::description() const {
  return "H2D / D2H / D2D copy bandwidth and latency over sizes and host memory kinds, the cost "
         "of pinning (cudaMallocHost) and registering (cudaHostRegister) host memory, and H2D / "
         "D2H to every GPU at once (gpus=all: GPUs sharing a PCIe switch or root port show up)";
}

const std::vector<AxisSchema>& CopyFamilyBase::axes() const {
  static const std::vector<AxisSchema> kAxes = {
      {"measure",
       AxisSchema::Kind::kString,
       {"bandwidth", "latency", "alloc_cost"},
       0,
       0,
       "bandwidth: GB/s of a block of copies; latency: time per small copy and round trip; "
       "alloc_cost: seconds per GiB to pin or register host memory"},
      {"direction", AxisSchema::Kind::kString, {"h2d", "d2h", "d2d"}, 0, 0, "copy direction"},
      {"host_memory",
       AxisSchema::Kind::kString,
       {"pageable-4k", "pageable-thp", "pinned", "registered-4k", "registered-thp",
        "registered-hugetlb"},
       0,
       0,
       "how the host buffer is allocated"},
      {"host_node",
       AxisSchema::Kind::kString,
       {"local", "remote"},
       0,
       0,
       "host buffer and measuring thread on the GPU's NUMA node, or on another one"},
      {"bytes", AxisSchema::Kind::kInteger, {}, 1, std::int64_t{1} << 36, "bytes per copy"},
      {"gpus",
       AxisSchema::Kind::kString,
       {"one", "all"},
       0,
       0,
       "one: the --device GPU (the default when the axis is absent); all: every selected GPU "
       "(run --devices) at once, each with a host buffer on its own NUMA node, reported per GPU "
       "and summed"},
  };
  return kAxes;
}

std::vector<std::string> CopyFamilyBase::required_axes() const { return {"measure", "bytes"}; }

CopyRequest decode_copy_request(const CaseSpec& spec) {
  CopyRequest r;
  const std::string measure = spec.str("measure");
  r.measure = measure == "latency"      ? CopyRequest::Measure::kLatency
              : measure == "alloc_cost" ? CopyRequest::Measure::kAllocCost
                                        : CopyRequest::Measure::kBandwidth;
  if (spec.has("direction")) {
    const std::string d = spec.str("direction");
    r.direction = d == "d2h"   ? CopyRequest::Direction::kD2H
                  : d == "d2d" ? CopyRequest::Direction::kD2D
                               : CopyRequest::Direction::kH2D;
  }
  if (spec.has("host_memory")) {
    r.host_memory = spec.str("host_memory");
    const auto dash = r.host_memory.find('-');
    const std::string kind = r.host_memory.substr(0, dash);
    r.page = dash == std::string::npos ? "" : r.host_memory.substr(dash + 1);
    r.host_kind = kind == "pageable"     ? CopyRequest::HostKind::kPageable
                  : kind == "registered" ? CopyRequest::HostKind::kRegistered
                                         : CopyRequest::HostKind::kPinned;
  }
  r.remote = spec.has("host_node") && spec.str("host_node") == "remote";
  r.all_gpus = spec.has("gpus") && spec.str("gpus") == "all";
  r.bytes = static_cast<std::uint64_t>(spec.integer("bytes"));
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
  switch (r.measure) {
    case CopyRequest::Measure::kBandwidth:
      return {{"bandwidth", "GB/s", Better::kHigher}, {"time_per_copy", "s", Better::kLower}};
    case CopyRequest::Measure::kLatency:
      return {{"time_per_copy", "s", Better::kLower}, {"round_trip_time", "s", Better::kLower}};
    case CopyRequest::Measure::kAllocCost:
      return {{"seconds_per_gib", "s/GiB", Better::kLower}};
  }
  return {};
}

std::optional<std::vector<std::string>> CopyFamilyBase::metric_names(const CaseSpec& spec) const {
  return metric_names_of(copy_metrics(decode_copy_request(spec), {"<N>"}));
}

std::vector<int> copy_all_gpus(const Machine& machine) {
  std::vector<int> gpus = machine.selected_gpus;
  if (gpus.empty()) {
    for (const auto& g : machine.gpus) gpus.push_back(g.index);
  }
  std::sort(gpus.begin(), gpus.end());
  gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
  return gpus;
}

namespace {

// What a gpus=all case cannot be: it measures concurrent bandwidth between host and GPUs, with
// memory the copy engines read or write directly.
std::optional<std::string> invalid_all_gpus(const CaseSpec& spec, const CopyRequest& r) {
  if (r.measure != CopyRequest::Measure::kBandwidth) {
    return "gpus=all measures bandwidth only (latency and alloc_cost are per-GPU measures)";
  }
  if (!spec.has("direction") || r.direction == CopyRequest::Direction::kD2D) {
    return "gpus=all copies between the host and every GPU: direction must be h2d or d2h";
  }
  if (!spec.has("host_memory") || (r.host_kind != CopyRequest::HostKind::kPinned &&
                                   r.host_kind != CopyRequest::HostKind::kRegistered)) {
    return "gpus=all needs host_memory pinned or registered-*: pageable copies are staged by "
           "the driver through the calling thread, so they cannot run on all GPUs at once";
  }
  if (r.remote) {
    return "gpus=all puts each GPU's host buffer on that GPU's own NUMA node: host_node=remote "
           "does not apply";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> CopyFamilyBase::invalid_combination(const CaseSpec& spec) const {
  const CopyRequest r = decode_copy_request(spec);
  if (r.all_gpus) return invalid_all_gpus(spec, r);
  const bool has_direction = spec.has("direction");
  const bool has_host = spec.has("host_memory");
  if (r.measure == CopyRequest::Measure::kAllocCost) {
    if (has_direction) return "alloc_cost copies nothing: drop the direction axis";
    if (!has_host || r.host_kind == CopyRequest::HostKind::kPageable) {
      return "alloc_cost needs host_memory pinned or registered-*";
    }
    return std::nullopt;
  }
  if (!has_direction) return "bandwidth and latency need a direction axis";
  if (r.direction == CopyRequest::Direction::kD2D) {
    if (has_host || spec.has("host_node")) {
      return "d2d has no host buffer: host_memory and host_node do not apply";
    }
    return std::nullopt;
  }
  if (!has_host) return "h2d and d2h need a host_memory axis";
  return std::nullopt;
}

MemoryNeeds CopyFamilyBase::memory_needs(const CaseSpec& spec) const {
  const CopyRequest r = decode_copy_request(spec);
  MemoryNeeds needs;
  if (r.measure == CopyRequest::Measure::kAllocCost) {
    needs.host_bytes = r.bytes;
  } else if (r.direction == CopyRequest::Direction::kD2D) {
    needs.device_bytes = 2 * r.bytes;
  } else {
    needs.host_bytes = r.bytes;
    needs.device_bytes = r.bytes;
  }
  return needs;
}

namespace {

// gpus=all on this machine: every GPU usable, its NUMA node known, and memory for one host buffer
// per GPU.
std::optional<std::string> all_gpus_skip_reason(const CopyRequest& r, const Machine& machine) {
  const std::vector<int> gpus = copy_all_gpus(machine);
  if (gpus.empty()) return machine.gpu_unavailable_reason(0);
  for (int gpu : gpus) {
    if (auto why = machine.gpu_unavailable_reason(gpu)) return why;
    if (!machine.gpu_local_node(gpu)) {
      return "the NUMA node of GPU " + std::to_string(gpu) +
             " is unknown (hwloc and sysfs report none) on a machine with " +
             std::to_string(machine.numa_nodes.size()) +
             " NUMA nodes, so its host buffer cannot be placed on its own node";
    }
    for (const auto& g : machine.gpus) {
      if (g.index == gpu && g.memory_bytes > 0 && g.memory_bytes < r.bytes) {
        return "GPU " + std::to_string(gpu) + " has " + format_bytes(g.memory_bytes) +
               " of memory, less than one " + format_bytes(r.bytes) + " copy";
      }
    }
  }
  const std::uint64_t host_bytes = r.bytes * gpus.size();
  if (machine.mem_available_bytes > 0 && host_bytes > machine.mem_available_bytes) {
    return "needs " + format_bytes(host_bytes) + " of host memory (one " + format_bytes(r.bytes) +
           " buffer for each of " + std::to_string(gpus.size()) + " GPUs); this machine has " +
           format_bytes(machine.mem_available_bytes) + " available";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> CopyFamilyBase::skip_reason(const CaseSpec& spec, const Machine& machine,
                                                       int device) const {
  const CopyRequest r = decode_copy_request(spec);
  if (r.all_gpus) {
    if (auto why = all_gpus_skip_reason(r, machine)) return why;
  } else if (auto why = machine.gpu_unavailable_reason(device)) {
    return why;
  }
  if (r.host_kind == CopyRequest::HostKind::kNone) return std::nullopt;
  if (r.page == "thp" && machine.thp_enabled == "never") {
    return "transparent huge pages are disabled (/sys/kernel/mm/transparent_hugepage/enabled = "
           "never); enable with: echo madvise | sudo tee "
           "/sys/kernel/mm/transparent_hugepage/enabled";
  }
  if (r.page == "hugetlb") {
    const std::uint64_t page = machine.hugetlb_page_bytes ? machine.hugetlb_page_bytes : 2u << 20;
    const std::uint64_t buffers = r.all_gpus ? copy_all_gpus(machine).size() : 1;
    const std::uint64_t needed = (r.bytes + page - 1) / page * buffers;
    if (machine.hugetlb_free_pages < needed) {
      return "needs " + std::to_string(needed) + " free hugetlb pages of " + format_bytes(page) +
             ", HugePages_Free is " + std::to_string(machine.hugetlb_free_pages) +
             "; reserve them with: echo " + std::to_string(needed) +
             " | sudo tee /proc/sys/vm/nr_hugepages";
    }
  }
  if (r.all_gpus) return std::nullopt;  // every GPU's node was checked above
  const auto local = machine.gpu_local_node(device);
  if (!local) {
    return "the NUMA node of GPU " + std::to_string(device) +
           " is unknown (hwloc and sysfs report none) on a machine with " +
           std::to_string(machine.numa_nodes.size()) +
           " NUMA nodes, so local and remote cannot "
           "be told apart";
  }
  if (r.remote && !machine.gpu_remote_node(device)) {
    return "host_node=remote needs a second NUMA node with memory; this machine has " +
           std::to_string(machine.numa_nodes.size()) + " (the GPU's node is " +
           std::to_string(*local) + ")";
  }
  return std::nullopt;
}

}  // namespace pathbench
