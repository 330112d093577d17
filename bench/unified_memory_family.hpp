#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "measure/family.hpp"

namespace pathbench {

// The `unified_memory` family's axes and host-side rules, shared by the CUDA build
// (bench/unified_memory.cu) and a build without CUDA (bench/unified_memory_unavailable.cpp), so
// scenario files validate the same on both.
class UnifiedMemoryFamilyBase : public Family {
 public:
  std::string_view name() const override { return "unified_memory"; }
  std::string_view description() const override;
  const std::vector<AxisSchema>& axes() const override;
  std::vector<std::string> required_axes() const override;
  std::optional<std::string> invalid_combination(const CaseSpec& spec) const override;
  MemoryNeeds memory_needs(const CaseSpec& spec) const override;
  Requirements requirements(const CaseSpec& spec) const override;
  std::optional<std::vector<std::string>> metric_names(const CaseSpec& spec) const override;
};

// Bounds of the axes (bytes between touched addresses; buffer size).
inline constexpr std::int64_t kUnifiedMemoryMinStride = std::int64_t{4} << 10;  // 4 KiB
inline constexpr std::int64_t kUnifiedMemoryMaxStride = std::int64_t{2} << 20;  // 2 MiB
inline constexpr std::int64_t kUnifiedMemoryMinBytes = std::int64_t{1} << 20;   // 1 MiB
inline constexpr std::int64_t kUnifiedMemoryMaxBytes = std::int64_t{4} << 30;   // 4 GiB
// The page the driver must migrate at least, per touched address (x86-64 base page).
inline constexpr std::uint64_t kUnifiedMemoryPageBytes = 4096;

// What a unified_memory case's axes ask for, decoded once.
struct UnifiedMemoryRequest {
  enum class Method {
    kFault,               // GPU first touch of host-resident pages: fault-driven migration
    kPrefetch,            // cudaMemPrefetchAsync to the GPU, then the same touch kernel
    kAdvisePreferredGpu,  // cudaMemAdvise(SetPreferredLocation, GPU), then the kernel
    kAdviseAccessedBy,    // cudaMemAdvise(SetAccessedBy, GPU), then the kernel
    kGpuToCpu,            // pages on the GPU, the host touches them: CPU faults back
  };
  Method method = Method::kFault;
  std::string method_name;  // the axis value
  std::uint64_t stride = 0;
  std::uint64_t bytes = 0;

  // Addresses touched in one pass: 0, stride, 2*stride, ... < bytes.
  std::uint64_t touches() const { return stride == 0 ? 0 : (bytes + stride - 1) / stride; }
  // Bytes a pass must migrate at the least (the lower bound used when the CUPTI counters are not
  // available): the whole buffer for a prefetch, else the page of every touched address.
  std::uint64_t estimated_migrated_bytes() const;
};
UnifiedMemoryRequest decode_unified_memory_request(const CaseSpec& spec);

// The metrics a unified_memory case records, in order (the bench's metrics(),
// bench/unified_memory.cu).
std::vector<MetricSpec> unified_memory_metrics();

// What prepare() reads from the CUDA runtime before it allocates anything.
struct UnifiedMemoryDeviceProperties {
  int device = 0;
  bool managed_memory = false;             // cudaDevAttrManagedMemory
  bool concurrent_managed_access = false;  // cudaDevAttrConcurrentManagedAccess
  bool pageable_memory_access = false;     // cudaDevAttrPageableMemoryAccess
  // cudaDevAttrPageableMemoryAccessUsesHostPageTables
  bool pageable_uses_host_page_tables = false;
  bool direct_managed_access_from_host = false;  // cudaDevAttrDirectManagedMemAccessFromHost
  std::uint64_t free_device_bytes = 0;           // cudaMemGetInfo
};
// GPU memory kept free beside the managed buffer (latch, kernels, CUPTI buffers).
inline constexpr std::uint64_t kUnifiedMemoryDeviceHeadroom = std::uint64_t{256} << 20;
// Why this device cannot run the case as asked (never measure something else), else nothing.
std::optional<std::string> unified_memory_device_skip_reason(
    const UnifiedMemoryRequest& request, const UnifiedMemoryDeviceProperties& properties);

// What CUPTI's unified-memory counters recorded during one pass.
struct UnifiedMemoryCounts {
  std::uint64_t gpu_fault_groups = 0;
  std::uint64_t bytes_h2d = 0, bytes_d2h = 0;
  std::uint64_t cpu_faults = 0;
  std::uint64_t lost_records = 0;  // what CUPTI itself reported lost (or without timestamps)
};

// CUPTI can lose unified-memory records without reporting the loss: on the H200 (driver 580,
// CUDA 13.0) a GPU touch at 64 KiB stride over 1 GiB counted 0.3-0.5 GB migrated and no GPU
// page-fault group at all, and dense 4 KiB passes counted 77-97 % of the buffer. The counts are
// checked against what the pass must have done; each contradiction found is one sentence here.
// Empty: nothing contradicts the counts (they may still be lower bounds).
std::vector<std::string> unified_memory_count_gaps(const UnifiedMemoryRequest& request,
                                                   const UnifiedMemoryCounts& counts);

// The bytes a pass's throughput metrics divide by: the counted bytes in the direction the pass
// migrates, never less than the least the pass must have migrated
// (estimated_migrated_bytes()); that lower bound when CUPTI counted nothing.
std::uint64_t unified_memory_migrated_bytes(const UnifiedMemoryRequest& request,
                                            const UnifiedMemoryCounts& counts);

// Whether the counts show that a pass of the fault method migrated by GPU faults: fault groups
// were counted, or pages reached the GPU during the pass. The pass issues nothing but the touch
// kernel on host-resident pages without advice (no prefetch), so every migration to the GPU in it
// was caused by a GPU page fault, counted or not.
bool unified_memory_fault_driven(const UnifiedMemoryCounts& counts);

std::unique_ptr<Family> make_unified_memory_family();

}  // namespace pathbench
