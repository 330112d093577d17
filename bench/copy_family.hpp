#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "measure/family.hpp"

namespace pathbench {

// The `copy` family's axes and host-side rules, shared by the CUDA build (bench/copy.cu) and a
// build without CUDA (bench/copy_unavailable.cpp), so scenario files validate the same on both.
class CopyFamilyBase : public Family {
 public:
  std::string_view name() const override { return "copy"; }
  std::string_view description() const override;
  const std::vector<AxisSchema>& axes() const override;
  std::vector<std::string> required_axes() const override;
  std::optional<std::string> invalid_combination(const CaseSpec& spec) const override;
  MemoryNeeds memory_needs(const CaseSpec& spec) const override;
  std::optional<std::string> skip_reason(const CaseSpec& spec, const Machine& machine,
                                         int device) const override;
  std::optional<std::vector<std::string>> metric_names(const CaseSpec& spec) const override;
};

// What a copy case's axes ask for, decoded once.
struct CopyRequest {
  enum class Measure { kBandwidth, kLatency, kAllocCost };
  enum class Direction { kH2D, kD2H, kD2D };
  enum class HostKind { kNone, kPageable, kPinned, kRegistered };
  Measure measure = Measure::kBandwidth;
  Direction direction = Direction::kH2D;
  HostKind host_kind = HostKind::kNone;
  std::string host_memory;  // the axis value, e.g. "registered-thp"
  std::string page;         // "4k" | "thp" | "hugetlb" for pageable/registered
  bool remote = false;      // host_node=remote
  // gpus=all: the copy runs to (or from) every GPU of copy_all_gpus() at once, each with its own
  // host buffer on its local node; gpus=one (or no gpus axis): the --device GPU alone.
  bool all_gpus = false;
  std::uint64_t bytes = 0;
};
CopyRequest decode_copy_request(const CaseSpec& spec);

// The metrics a copy case records, in order: what its bench's metrics() returns (bench/copy.cu,
// bench/copy_all_gpus.cu) and what the family declares for gate blocks. `gpu_labels`: for
// gpus=all, the label of each GPU's own bandwidth metric, "bandwidth_gpu<label>".
std::vector<MetricSpec> copy_metrics(const CopyRequest& r,
                                     const std::vector<std::string>& gpu_labels = {});

// The GPUs of a gpus=all case: the machine's selected GPUs (run --devices), or every GPU when
// none are selected; sorted.
std::vector<int> copy_all_gpus(const Machine& machine);

std::unique_ptr<Family> make_copy_family();

}  // namespace pathbench
