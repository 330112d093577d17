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

MemoryNeeds UnifiedMemoryFamilyBase::memory_needs(const CaseSpec& spec) const {
  // One managed buffer: it lives on the host between passes and on the GPU after a pass.
  const UnifiedMemoryRequest r = decode_unified_memory_request(spec);
  return MemoryNeeds{r.bytes, r.bytes};
}

std::optional<std::string> UnifiedMemoryFamilyBase::skip_reason(const CaseSpec&,
                                                                const Machine& machine,
                                                                int device) const {
  if (auto why = machine.gpu_unavailable_reason(device)) return why;
  // Device properties (managed memory, concurrent managed access, direct host access) need the
  // CUDA runtime: prepare() queries them and skips with the attribute's name.
  return std::nullopt;
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

}  // namespace pathbench
