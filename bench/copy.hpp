#pragma once

// The `copy` family: H2D / D2H / D2D copies between host memory of every kind and the GPU.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "measure/family.hpp"
#include "placement/page_type.hpp"

namespace pathbench {

enum class CopyMeasure { kBandwidth, kLatency, kAllocCost };
// kBidir: H2D and D2H at once, on two streams released together (nvbandwidth's bidirectional
// host copies): each direction's rate while the other runs, and their sum.
enum class CopyDirection { kH2D, kD2H, kD2D, kBidir };
// The host_memory axis: how the host buffer is allocated and, for mmap'd memory, its pages.
enum class CopyHostMemory {
  kPageable4K,
  kPageableThp,
  kPinned,
  kRegistered4K,
  kRegisteredThp,
  kRegisteredHugetlb
};

// What a copy case's axes ask for, decoded once.
struct CopyRequest {
  CopyMeasure measure = CopyMeasure::kBandwidth;
  std::optional<CopyDirection> direction;
  std::optional<CopyHostMemory> host;  // none: d2d, or alloc_cost without a host axis
  bool remote = false;                 // host_node=remote
  // gpus=all: to (or from) every GPU in use at once, each with its own host buffer on its local
  // node; gpus=one (or no gpus axis): the --device GPU alone.
  bool all_gpus = false;
  std::uint64_t bytes = 0;

  bool pageable() const;
  bool pinned() const { return host == CopyHostMemory::kPinned; }
  std::optional<PageType> page() const;  // of pageable and registered memory
};
CopyRequest decode_copy_request(const CaseSpec& spec);

// The metrics a copy case records, in order. `gpu_labels`: for gpus=all, the label of each GPU's
// own bandwidth metric, "bandwidth_gpu<label>".
std::vector<MetricSpec> copy_metrics(const CopyRequest& r,
                                     const std::vector<std::string>& gpu_labels = {});

// The GPUs of a gpus=all case (gpus_in_use).
std::vector<int> copy_all_gpus(const Machine& machine);

std::unique_ptr<Family> make_copy_family();

// The CUDA benches (bench/copy.cu, bench/copy_all_gpus.cu).
std::unique_ptr<CaseBench> make_copy_bench(const CopyRequest& r, const Machine& machine,
                                           int device);
std::unique_ptr<CaseBench> make_copy_all_gpus_bench(const CopyRequest& r, const Machine& machine);

}  // namespace pathbench
