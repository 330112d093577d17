#pragma once

// The `overlap` family: does an H2D copy of the next batch really run while the current batch's
// kernel computes? Variants of the same double-buffered loop, judged on a CUPTI timeline of every
// sample, not on API flags.

#include <cstdint>
#include <memory>
#include <vector>

#include "measure/family.hpp"
#include "measure/host_placement.hpp"

namespace pathbench {

enum class OverlapVariant {
  kPageableSeparateStream,
  kPinnedSameStream,
  kPinnedEventWait,
  kPinnedDeviceSync
};

struct OverlapRequest {
  OverlapVariant variant = OverlapVariant::kPinnedEventWait;
  std::uint64_t kernel_ns = 0;
  std::uint64_t bytes = 0;
  int iterations = 8;
  HostPlacementRequest placement;  // the host buffers' node and the issuing thread's CPUs
};

// The metrics an overlap case records, in order.
std::vector<MetricSpec> overlap_metrics();

std::unique_ptr<Family> make_overlap_family();
std::unique_ptr<CaseBench> make_overlap_bench(const OverlapRequest& r, const Machine& machine,
                                              int device);  // bench/overlap.cu

}  // namespace pathbench
