#include "bench/unified_memory_family.hpp"

#include <algorithm>

#include "core/units.hpp"

namespace pathbench {

std::string_view UnifiedMemoryFamilyBase::description() const {
  return "Unified Memory: fault-driven migration of host-initialised managed buffers at 4 KiB / "
         "64 KiB / 2 MiB strides vs cudaMemPrefetchAsync vs cudaMemAdvise (preferred location, "
         "accessed-by), and GPU-to-CPU faults back; fault groups and migrated bytes from CUPTI "
         "unified-memory counters";
}

const std::vector<AxisSchema>& UnifiedMemoryFamilyBase::axes() const {
  static const std::vector<AxisSchema> kAxes = {
      {"method",
       AxisSchema::Kind::kString,
       {"fault", "prefetch", "advise_preferred_gpu", "advise_accessed_by", "gpu_to_cpu"},
       0,
       0,
       "fault: the GPU's first touch migrates host pages on demand; prefetch: "
       "cudaMemPrefetchAsync to the GPU before the same kernel (timed together); "
       "advise_preferred_gpu / advise_accessed_by: cudaMemAdvise(SetPreferredLocation / "
       "SetAccessedBy, GPU) before the kernel; gpu_to_cpu: pages on the GPU, the host touches "
       "them"},
      {"stride",
       AxisSchema::Kind::kInteger,
       {},
       kUnifiedMemoryMinStride,
       kUnifiedMemoryMaxStride,
       "bytes between touched addresses (a power of two, 4 KiB .. 2 MiB); one byte is read and "
       "written at each"},
      {"bytes",
       AxisSchema::Kind::kInteger,
       {},
       kUnifiedMemoryMinBytes,
       kUnifiedMemoryMaxBytes,
       "size of the managed buffer (1 MiB .. 4 GiB)"},
  };
  return kAxes;
}

std::vector<std::string> UnifiedMemoryFamilyBase::required_axes() const {
  return {"method", "stride", "bytes"};
}

std::uint64_t UnifiedMemoryRequest::estimated_migrated_bytes() const {
  if (method == Method::kPrefetch) return bytes;
  return std::min(bytes, touches() * std::min<std::uint64_t>(stride, kUnifiedMemoryPageBytes));
}

UnifiedMemoryRequest decode_unified_memory_request(const CaseSpec& spec) {
  UnifiedMemoryRequest r;
  r.method_name = spec.has("method") ? spec.str("method") : "fault";
  using Method = UnifiedMemoryRequest::Method;
  r.method = r.method_name == "prefetch"               ? Method::kPrefetch
             : r.method_name == "advise_preferred_gpu" ? Method::kAdvisePreferredGpu
             : r.method_name == "advise_accessed_by"   ? Method::kAdviseAccessedBy
             : r.method_name == "gpu_to_cpu"           ? Method::kGpuToCpu
                                                       : Method::kFault;
  if (spec.has("stride")) r.stride = static_cast<std::uint64_t>(spec.integer("stride"));
  if (spec.has("bytes")) r.bytes = static_cast<std::uint64_t>(spec.integer("bytes"));
  return r;
}

std::optional<std::string> UnifiedMemoryFamilyBase::invalid_combination(
    const CaseSpec& spec) const {
  for (const auto& axis : required_axes()) {
    if (!spec.has(axis)) return "the " + axis + " axis is required";
  }
  const UnifiedMemoryRequest r = decode_unified_memory_request(spec);
  if (r.stride == 0 || (r.stride & (r.stride - 1)) != 0) {
    return "stride " + std::to_string(r.stride) +
           " is not a power of two (use 4KiB, 64KiB, 2MiB, ...)";
  }
  if (r.stride > r.bytes) {
    return "stride " + format_bytes(r.stride) + " is larger than the buffer (" +
           format_bytes(r.bytes) + "): a pass would touch one address";
  }
  return std::nullopt;
}

std::vector<MetricSpec> unified_memory_metrics() {
  return {{"time", "s", Better::kLower},
          {"migration_throughput", "GB/s", Better::kHigher},
          {"time_per_mib", "s/MiB", Better::kLower}};
}

std::optional<std::vector<std::string>> UnifiedMemoryFamilyBase::metric_names(
    const CaseSpec&) const {
  return metric_names_of(unified_memory_metrics());
}

MemoryNeeds UnifiedMemoryFamilyBase::memory_needs(const CaseSpec& spec) const {
  // One managed buffer: it lives on the host between passes and on the GPU after a pass.
  const UnifiedMemoryRequest r = decode_unified_memory_request(spec);
  return MemoryNeeds{r.bytes, r.bytes};
}

Requirements UnifiedMemoryFamilyBase::requirements(const CaseSpec&) const {
  // Device properties (managed memory, concurrent managed access, direct host access) need the
  // CUDA runtime: prepare() queries them and skips with the attribute's name.
  return std::move(Requirements().gpu());
}

std::optional<std::string> unified_memory_device_skip_reason(
    const UnifiedMemoryRequest& request, const UnifiedMemoryDeviceProperties& properties) {
  const std::string gpu = "GPU " + std::to_string(properties.device);
  if (!properties.managed_memory) {
    return gpu + " cannot allocate managed memory on this system (cudaDevAttrManagedMemory = 0)";
  }
  if (!properties.concurrent_managed_access) {
    return gpu +
           " has cudaDevAttrConcurrentManagedAccess = 0 (a GPU older than Pascal, Windows or "
           "WSL): the driver migrates whole managed allocations at kernel launch, so there are "
           "no GPU page faults to measure and cudaMemPrefetchAsync to the GPU is not allowed";
  }
  if (request.method == UnifiedMemoryRequest::Method::kGpuToCpu &&
      properties.direct_managed_access_from_host) {
    return "the host reads and writes managed memory on " + gpu +
           " directly, without migration (cudaDevAttrDirectManagedMemAccessFromHost = 1, a "
           "coherent CPU-GPU link): there are no CPU faults back to measure";
  }
  const std::uint64_t needed = request.bytes + kUnifiedMemoryDeviceHeadroom;
  if (properties.free_device_bytes < needed) {
    return "the managed buffer of " + format_bytes(request.bytes) + " (plus " +
           format_bytes(kUnifiedMemoryDeviceHeadroom) + " headroom) does not fit in the " +
           format_bytes(properties.free_device_bytes) + " free on " + gpu +
           " (cudaMemGetInfo); pathbench never oversubscribes GPU memory with managed memory";
  }
  return std::nullopt;
}

std::vector<std::string> unified_memory_count_gaps(const UnifiedMemoryRequest& request,
                                                   const UnifiedMemoryCounts& counts) {
  using Method = UnifiedMemoryRequest::Method;
  std::vector<std::string> gaps;
  if (counts.lost_records > 0) {
    gaps.push_back("CUPTI reported " + std::to_string(counts.lost_records) +
                   " record(s) lost or without timestamps");
  }
  const std::uint64_t least = request.estimated_migrated_bytes();
  const bool must_reach_gpu =
      request.method == Method::kFault || request.method == Method::kPrefetch;
  if (must_reach_gpu && counts.bytes_h2d < least) {
    gaps.push_back(
        "CUPTI counted " + format_bytes(counts.bytes_h2d) + " migrated to the GPU, less than the " +
        format_bytes(least) +
        (request.method == Method::kPrefetch ? " prefetched" : " the touched pages alone occupy"));
  }
  if (request.method == Method::kFault && counts.bytes_h2d > 0 && counts.gpu_fault_groups == 0) {
    gaps.push_back("CUPTI counted " + format_bytes(counts.bytes_h2d) +
                   " migrated to the GPU by a pass that only faults, but no GPU page-fault "
                   "group");
  }
  if (request.method == Method::kGpuToCpu) {
    if (counts.bytes_d2h < least) {
      gaps.push_back("CUPTI counted " + format_bytes(counts.bytes_d2h) +
                     " migrated back to the host, less than the " + format_bytes(least) +
                     " the touched pages alone occupy");
    }
    if (counts.bytes_d2h > 0 && counts.cpu_faults == 0) {
      gaps.push_back("CUPTI counted " + format_bytes(counts.bytes_d2h) +
                     " migrated back to the host by host touches, but no CPU page fault");
    }
  }
  return gaps;
}

std::uint64_t unified_memory_migrated_bytes(const UnifiedMemoryRequest& request,
                                            const UnifiedMemoryCounts& counts) {
  const std::uint64_t counted = request.method == UnifiedMemoryRequest::Method::kGpuToCpu
                                    ? counts.bytes_d2h
                                    : counts.bytes_h2d;
  return std::max(counted, request.estimated_migrated_bytes());
}

bool unified_memory_fault_driven(const UnifiedMemoryCounts& counts) {
  return counts.gpu_fault_groups > 0 || counts.bytes_h2d > 0;
}

}  // namespace pathbench
