#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "placement/memory_policy.hpp"
#include "placement/page_type.hpp"

namespace pathbench {

struct HostBufferRequest {
  std::size_t bytes = 0;
  PageType page_type = PageType::k4K;
  std::optional<int> numa_node;  // bind (MPOL_BIND) before first touch when set
  // With a numa_node: bind or preferred to it. Interleave spreads over `interleave_nodes`
  // instead (numa_node unset); local sets no policy.
  MemoryPolicyMode policy = MemoryPolicyMode::kBind;
  std::vector<int> interleave_nodes = {};
};

// An mmap'd host buffer with a chosen page type, bound to a NUMA node before first touch.
// Mapping does not touch it: callers decide when the first touch happens (first-touch cost is a
// measurement of its own). Unmaps on destruction.
class HostBuffer {
 public:
  // Throws SkipCase when the machine cannot provide the request (no free hugetlb pages, node
  // without memory) and SystemError when a call fails (including a failed strict mbind).
  explicit HostBuffer(const HostBufferRequest& request);
  HostBuffer(HostBuffer&& other) noexcept;
  HostBuffer& operator=(HostBuffer&& other) noexcept;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer();

  std::byte* data() const { return data_; }
  std::size_t size() const { return bytes_; }          // what was asked for
  std::size_t mapped_size() const { return mapped_; }  // rounded to the page size
  const HostBufferRequest& request() const { return request_; }
  std::span<std::byte> span() const { return {data_, bytes_}; }

  // Writes one byte in every 4 KiB of the mapping, faulting every page in.
  void touch();

 private:
  HostBufferRequest request_;
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t mapped_ = 0;
};

// Bytes of one page of `t` on this machine: the base page (4 KiB on x86-64), the THP PMD size
// (/sys/kernel/mm/transparent_hugepage/hpage_pmd_size) or the default hugetlb page size
// (/proc/meminfo Hugepagesize). Falls back to 2 MiB for the huge kinds when the kernel does not
// say.
std::size_t page_size_of(PageType t);
// "4k", "2m", "1g": a page size as a per-page metric spells it in its name.
std::string page_size_label(std::uint64_t bytes);

// Applies MPOL_BIND for `node` to [addr, addr+len). Throws SystemError naming the node on failure.
void bind_to_node(void* addr, std::size_t len, int node);

}  // namespace pathbench
