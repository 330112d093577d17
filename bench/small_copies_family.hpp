#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "measure/family.hpp"

namespace pathbench {

// What a small_copies case's axes ask for, decoded once.
struct SmallCopiesRequest {
  enum class Method { kIndividual, kCoalesced, kBatched, kGraph, kGatherKernel };
  enum class Direction { kH2D, kD2H };
  Method method = Method::kIndividual;
  Direction direction = Direction::kH2D;
  std::uint64_t count = 1;  // N pieces per batch
  std::uint64_t bytes = 1;  // S bytes per piece

  std::uint64_t batch_bytes() const { return count * bytes; }
  // Host pieces are scattered: piece i starts at i * piece_pitch() of one pinned allocation, so
  // no two pieces are contiguous (at least 4 KiB apart) and each starts on a 4 KiB boundary.
  std::uint64_t piece_pitch() const;
  // CUDA API calls the method issues per batch: N cudaMemcpyAsync for individual, one
  // cudaMemcpyAsync (after the host packing) for coalesced, one cudaMemcpyBatchAsync, one
  // cudaGraphLaunch, one kernel launch.
  std::uint64_t api_calls_per_batch() const;
  // Copy operations (DMA copies the GPU performs) per batch: N, except 1 for coalesced and 0 for
  // the gather kernel, which moves the data with loads and stores.
  std::uint64_t copy_operations_per_batch() const;
  // Host memory the case allocates: the scattered pieces, plus the staging buffer of coalesced.
  std::uint64_t host_bytes() const;
};
SmallCopiesRequest decode_small_copies_request(const CaseSpec& spec);
std::string_view to_string(SmallCopiesRequest::Method m);

// The metrics a small_copies case records, in order (the bench's metrics(),
// bench/small_copies.cu).
std::vector<MetricSpec> small_copies_metrics(const SmallCopiesRequest& r);

// The `small_copies` family's axes and host-side rules, shared by the CUDA build
// (bench/small_copies.cu) and a build without CUDA (bench/small_copies_unavailable.cpp), so
// scenario files validate the same on both.
class SmallCopiesFamilyBase : public Family {
 public:
  // `batched_unavailable`: why method=batched cannot run with this build (cudaMemcpyBatchAsync
  // needs CUDA 12.8), empty when it can.
  explicit SmallCopiesFamilyBase(std::string batched_unavailable = {})
      : batched_unavailable_(std::move(batched_unavailable)) {}

  std::string_view name() const override { return "small_copies"; }
  std::string_view description() const override;
  const std::vector<AxisSchema>& axes() const override;
  std::vector<std::string> required_axes() const override;
  std::optional<std::string> invalid_combination(const CaseSpec& spec) const override;
  MemoryNeeds memory_needs(const CaseSpec& spec) const override;
  Requirements requirements(const CaseSpec& spec) const override;
  std::optional<std::vector<std::string>> metric_names(const CaseSpec& spec) const override;

 protected:
  std::string batched_unavailable_;
};

inline constexpr std::int64_t kSmallCopiesMaxCount = 65536;
inline constexpr std::int64_t kSmallCopiesMaxBytes = std::int64_t{64} << 20;

std::unique_ptr<Family> make_small_copies_family();

}  // namespace pathbench
