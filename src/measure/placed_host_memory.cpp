#include "measure/placed_host_memory.hpp"

#include "cuda/cuda_check.hpp"
#include "cuda/memory_type.hpp"
#include "placement/memory_policy.hpp"
#include "placement/page_placement.hpp"
#include "placement/smaps.hpp"

namespace pathbench {

namespace {

constexpr double kMinPlacedFraction = 0.99;
constexpr double kMinHugeFraction = 0.9;

}  // namespace

PlacedHostMemory::PlacedHostMemory(const HostMemoryRequest& request) : request_(request) {
  if (request.kind == HostMemoryKind::kPinned) {
    // The driver faults pinned pages in on this thread, under the thread's policy.
    std::optional<MemoryPolicyScope> policy;
    if (request.node) policy.emplace(*request.node);
    pinned_ = PinnedHostMemory(request.bytes, request.pinned_flags);
    ptr_ = pinned_.get();
    return;
  }
  buffer_.emplace(HostBufferRequest{request.bytes, request.page.value_or(PageType::k4K),
                                    request.node});
  buffer_->touch();
  ptr_ = buffer_->data();
  if (request.kind == HostMemoryKind::kRegistered) {
    registration_ = HostRegistration(ptr_, request.bytes);
  }
}

Check host_memory_kind_check(const void* ptr, cudaMemoryType expected, const std::string& what,
                             bool mapped) {
  cudaPointerAttributes attr{};
  PB_CUDA(cudaPointerGetAttributes(&attr, ptr));
  bool passed = attr.type == expected;
  std::string detail = "CUDA reports the " + what + " as " + memory_type_name(attr.type) +
                       ", expected " + memory_type_name(expected);
  if (mapped) {
    passed = passed && attr.devicePointer != nullptr;
    detail += attr.devicePointer ? "; mapped into the device's address space"
                                 : "; not mapped into the device's address space";
  }
  return {"host_memory_kind", passed, detail, memory_type_name(attr.type)};
}

std::vector<Check> PlacedHostMemory::checks(const std::string& what,
                                            const std::string& suffix) const {
  std::vector<Check> out;
  const bool pageable = request_.kind == HostMemoryKind::kPageable;
  out.push_back(host_memory_kind_check(ptr_, pageable ? cudaMemoryTypeUnregistered : cudaMemoryTypeHost,
                                       what, (request_.pinned_flags & cudaHostAllocMapped) != 0));
  if (request_.node) {
    const int node = *request_.node;
    const PagePlacement where = query_page_placement(ptr_, request_.bytes);
    if (request_.kind == HostMemoryKind::kPinned && where.pages_error == where.pages_sampled) {
      // Driver-allocated pinned pages are not visible to move_pages; say so rather than guess.
      out.push_back({"host_placement", true,
                     "move_pages cannot see cudaMallocHost pages (" + where.describe() +
                         "); allocated under MPOL_BIND to node " + std::to_string(node),
                     nullptr});
    } else {
      const double on_node = where.fraction_on(node);
      out.push_back({"host_placement", on_node >= kMinPlacedFraction,
                     where.describe() + " (wanted node " + std::to_string(node) + ")", on_node});
    }
  }
  if (request_.page && request_.kind != HostMemoryKind::kPinned) {
    const auto backing = query_huge_backing(ptr_, request_.bytes);
    if (!backing) {
      out.push_back({"huge_backing", false, "the " + what + " is not in /proc/self/smaps", nullptr});
    } else if (*request_.page == PageType::k4K) {
      out.push_back({"huge_backing", backing->huge_kb == 0,
                     backing->describe() + " (wanted 4 KiB pages only)", backing->fraction()});
    } else {
      out.push_back({"huge_backing", backing->fraction() >= kMinHugeFraction,
                     backing->describe() + " (wanted huge pages)", backing->fraction()});
    }
  }
  for (auto& c : out) c.name += suffix;
  return out;
}

}  // namespace pathbench
