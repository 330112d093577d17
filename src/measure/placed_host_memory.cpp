#include "measure/placed_host_memory.hpp"

#include "cuda/cuda_check.hpp"
#include "cuda/memory_type.hpp"
#include "placement/buffer_checks.hpp"
#include "placement/memory_policy.hpp"

namespace pathbench {


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
  const bool pinned = request_.kind == HostMemoryKind::kPinned;
  if (request_.node) {
    out.push_back(page_placement_check("host_placement", ptr_, request_.bytes, request_.node, pinned));
  }
  if (request_.page && !pinned) {
    out.push_back(huge_backing_check("huge_backing", ptr_, request_.bytes, *request_.page));
  }
  for (auto& c : out) c.name += suffix;
  return out;
}

}  // namespace pathbench
