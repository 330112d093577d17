#include "placement/host_buffer.hpp"

#include <numa.h>
#include <numaif.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/errors.hpp"
#include "core/units.hpp"

namespace pathbench {

std::string_view to_string(PageType t) {
  switch (t) {
    case PageType::k4K:
      return "4k";
    case PageType::kThp:
      return "thp";
    case PageType::kHugetlb:
      return "hugetlb";
  }
  return "unknown";
}

std::optional<PageType> page_type_from_string(std::string_view s) {
  if (s == "4k") return PageType::k4K;
  if (s == "thp") return PageType::kThp;
  if (s == "hugetlb") return PageType::kHugetlb;
  return std::nullopt;
}

namespace {

constexpr std::size_t kTouchStride = 4096;
constexpr std::size_t kDefaultHugePage = 2u << 20;

std::size_t round_up(std::size_t value, std::size_t multiple) {
  if (value > std::numeric_limits<std::size_t>::max() - (multiple - 1)) {
    throw std::length_error("host buffer size " + std::to_string(value) + " overflows");
  }
  return (value + multiple - 1) / multiple * multiple;
}

std::size_t base_page_size() {
  const long page = ::sysconf(_SC_PAGESIZE);
  return page > 0 ? static_cast<std::size_t>(page) : 4096;
}

// PMD size: the unit THP can back with one huge page (2 MiB on x86-64, larger on some arm64).
std::size_t thp_page_size() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size");
  std::uint64_t bytes = 0;
  if (in >> bytes && bytes > 0) return static_cast<std::size_t>(bytes);
  return kDefaultHugePage;
}

// Fields of /proc/meminfo that describe the default hugetlb pool.
struct HugetlbPool {
  std::uint64_t page_bytes = kDefaultHugePage;
  std::uint64_t total = 0;
  std::uint64_t free = 0;
  std::uint64_t reserved = 0;  // promised to existing mappings, still counted in "free"
};

HugetlbPool read_hugetlb_pool() {
  HugetlbPool pool;
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key;
    std::uint64_t value = 0;
    if (!(fields >> key >> value)) continue;
    if (key == "Hugepagesize:") pool.page_bytes = value * 1024;
    if (key == "HugePages_Total:") pool.total = value;
    if (key == "HugePages_Free:") pool.free = value;
    if (key == "HugePages_Rsvd:") pool.reserved = value;
  }
  return pool;
}

// Free hugetlb pages of the default size on one node; nothing when sysfs does not say.
std::optional<std::uint64_t> node_free_hugetlb_pages(int node, std::uint64_t page_bytes) {
  const std::string path = "/sys/devices/system/node/node" + std::to_string(node) +
                           "/hugepages/hugepages-" + std::to_string(page_bytes / 1024) +
                           "kB/free_hugepages";
  std::ifstream in(path);
  std::uint64_t pages = 0;
  if (in >> pages) return pages;
  return std::nullopt;
}

// A bind to a node that cannot hold memory is a machine limitation (skip), not a failure: say
// which one before mbind answers with a bare EINVAL.
void require_usable_node(int node) {
  if (numa_available() < 0) {
    throw SkipCase("cannot bind memory to NUMA node " + std::to_string(node) +
                   ": the kernel has no NUMA support (numa_available() < 0)");
  }
  const int max_node = numa_max_node();
  if (node < 0 || node > max_node) {
    throw SkipCase("NUMA node " + std::to_string(node) +
                   " does not exist on this machine (nodes 0-" + std::to_string(max_node) + ")");
  }
  long long free_bytes = 0;
  const long long size = numa_node_size64(node, &free_bytes);
  if (size <= 0) {
    throw SkipCase("NUMA node " + std::to_string(node) + " has no memory");
  }
  struct bitmask* allowed = numa_get_mems_allowed();
  const bool permitted = allowed != nullptr && numa_bitmask_isbitset(allowed, node) != 0;
  if (allowed != nullptr) numa_bitmask_free(allowed);
  if (!permitted) {
    throw SkipCase("NUMA node " + std::to_string(node) +
                   " is not in this process's allowed memory nodes (cpuset.mems); run with a "
                   "cpuset that includes it");
  }
}

// Bytes of PROT_NONE kept on each side of a 4k or THP buffer. Without them the kernel merges
// neighbouring buffers with equal flags (a memcpy's source and destination) into one VMA, and
// /proc/self/smaps could then only describe both together. hugetlb mappings never merge.
std::size_t guard_size(PageType t) { return t == PageType::kHugetlb ? 0 : base_page_size(); }

// Maps `length` bytes starting on an `alignment` boundary, between two guard pages. THP backs
// only PMD-aligned ranges with huge pages, hence the alignment; the reservation is made
// PROT_NONE and over-sized, then trimmed, and only the buffer itself is made writable.
std::byte* map_guarded(std::size_t length, std::size_t alignment, const char* what) {
  const std::size_t guard = base_page_size();
  const std::size_t over = length + 2 * guard + (alignment > guard ? alignment : 0);
  void* p = ::mmap(nullptr, over, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    throw SystemError(std::string("mmap(") + what + ", " + std::to_string(over) + " bytes)", errno);
  }
  auto* raw = static_cast<std::byte*>(p);
  const auto first = reinterpret_cast<std::uintptr_t>(raw) + guard;
  const std::uintptr_t aligned = (first + alignment - 1) / alignment * alignment;
  std::byte* const data = raw + (aligned - reinterpret_cast<std::uintptr_t>(raw));
  std::byte* const keep_begin = data - guard;
  std::byte* const keep_end = data + length + guard;
  if (keep_begin > raw) ::munmap(raw, static_cast<std::size_t>(keep_begin - raw));
  if (raw + over > keep_end) ::munmap(keep_end, static_cast<std::size_t>(raw + over - keep_end));
  if (::mprotect(data, length, PROT_READ | PROT_WRITE) != 0) {
    const int err = errno;
    ::munmap(keep_begin, length + 2 * guard);
    throw SystemError(std::string("mprotect(") + what + ", " + std::to_string(length) +
                          " bytes, PROT_READ|PROT_WRITE)",
                      err);
  }
  return data;
}

void unmap(std::byte* data, std::size_t mapped, PageType t) {
  const std::size_t guard = guard_size(t);
  ::munmap(data - guard, mapped + 2 * guard);
}

}  // namespace

std::size_t page_size_of(PageType t) {
  switch (t) {
    case PageType::k4K:
      return base_page_size();
    case PageType::kThp:
      return thp_page_size();
    case PageType::kHugetlb:
      return static_cast<std::size_t>(read_hugetlb_pool().page_bytes);
  }
  return base_page_size();
}

void bind_to_node(void* addr, std::size_t len, int node) {
  apply_memory_policy(addr, len, MemoryPolicyMode::kBind, {node});
}

HostBuffer::HostBuffer(const HostBufferRequest& request)
    : request_(request), bytes_(request.bytes) {
  if (request.bytes == 0) throw std::invalid_argument("HostBuffer: a buffer of 0 bytes");
  if (request.numa_node) require_usable_node(*request.numa_node);

  switch (request.page_type) {
    case PageType::k4K: {
      mapped_ = round_up(bytes_, base_page_size());
      data_ = map_guarded(mapped_, base_page_size(), "4k");
      // EINVAL means a kernel without THP: the pages are 4 KiB anyway.
      if (::madvise(data_, mapped_, MADV_NOHUGEPAGE) != 0 && errno != EINVAL) {
        const int err = errno;
        unmap(data_, mapped_, PageType::k4K);
        throw SystemError("madvise(MADV_NOHUGEPAGE)", err);
      }
      break;
    }
    case PageType::kThp: {
      const std::size_t huge = thp_page_size();
      mapped_ = round_up(bytes_, huge);
      data_ = map_guarded(mapped_, huge, "thp");
      if (::madvise(data_, mapped_, MADV_HUGEPAGE) != 0) {
        const int err = errno;
        unmap(data_, mapped_, PageType::kThp);
        if (err == EINVAL) {
          throw SkipCase(
              "transparent huge pages are not supported by this kernel "
              "(madvise(MADV_HUGEPAGE) returned EINVAL)");
        }
        throw SystemError("madvise(MADV_HUGEPAGE)", err);
      }
      break;
    }
    case PageType::kHugetlb: {
      const HugetlbPool pool = read_hugetlb_pool();
      mapped_ = round_up(bytes_, pool.page_bytes);
      const std::uint64_t need = mapped_ / pool.page_bytes;
      if (request.numa_node) {
        // The pool is per node: a bind to a node without free pages would SIGBUS on first touch
        // instead of failing here.
        const int node = *request.numa_node;
        const auto node_free = node_free_hugetlb_pages(node, pool.page_bytes);
        if (node_free && *node_free < need) {
          throw SkipCase("no free hugetlb pages on NUMA node " + std::to_string(node) + ": need " +
                         std::to_string(need) + " × " + format_bytes(pool.page_bytes) +
                         ", free_hugepages=" + std::to_string(*node_free) +
                         "; reserve them with `echo " + std::to_string(need) +
                         " | sudo tee /sys/devices/system/node/node" + std::to_string(node) +
                         "/hugepages/hugepages-" + std::to_string(pool.page_bytes / 1024) +
                         "kB/nr_hugepages`");
        }
      }
      void* p = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
      if (p == MAP_FAILED) {
        const int err = errno;
        if (err == ENOMEM) {
          // Pages already in use or reserved by others stay so: the pool must grow by the
          // shortfall, which is what the suggested total does.
          const std::uint64_t available = pool.free > pool.reserved ? pool.free - pool.reserved : 0;
          const std::uint64_t shortfall = need > available ? need - available : 0;
          const std::uint64_t target = pool.total + (shortfall > 0 ? shortfall : need);
          throw SkipCase(
              "no free hugetlb pages: need " + std::to_string(need) + " × " +
              format_bytes(pool.page_bytes) + ", HugePages_Free=" + std::to_string(pool.free) +
              (pool.reserved > 0 ? " of which " + std::to_string(pool.reserved) + " reserved"
                                 : std::string()) +
              "; reserve them with `echo " + std::to_string(target) +
              " | sudo tee /proc/sys/vm/nr_hugepages`");
        }
        throw SystemError("mmap(MAP_HUGETLB, " + std::to_string(mapped_) + " bytes)", err);
      }
      data_ = static_cast<std::byte*>(p);
      break;
    }
  }

  const bool interleave = request.policy == MemoryPolicyMode::kInterleave;
  if ((request.numa_node && request.policy != MemoryPolicyMode::kLocal) || interleave) {
    try {
      apply_memory_policy(
          data_, mapped_, request.policy,
          interleave ? request.interleave_nodes : std::vector<int>{*request.numa_node});
    } catch (...) {
      unmap(data_, mapped_, request_.page_type);
      throw;
    }
  }
}

HostBuffer::HostBuffer(HostBuffer&& other) noexcept
    : request_(other.request_),
      data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      mapped_(std::exchange(other.mapped_, 0)) {}

HostBuffer& HostBuffer::operator=(HostBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) unmap(data_, mapped_, request_.page_type);
    request_ = other.request_;
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    mapped_ = std::exchange(other.mapped_, 0);
  }
  return *this;
}

HostBuffer::~HostBuffer() {
  if (data_ != nullptr) unmap(data_, mapped_, request_.page_type);
}

void HostBuffer::touch() {
  // volatile: the stores are the measurement (first-touch faults), not data anyone reads.
  volatile std::byte* p = data_;
  for (std::size_t offset = 0; offset < mapped_; offset += kTouchStride) {
    p[offset] = std::byte{1};
  }
}

std::string page_size_label(std::uint64_t bytes) {
  if (bytes % (1ULL << 30) == 0) return std::to_string(bytes >> 30) + "g";
  if (bytes % (1ULL << 20) == 0) return std::to_string(bytes >> 20) + "m";
  if (bytes % (1ULL << 10) == 0) return std::to_string(bytes >> 10) + "k";
  return std::to_string(bytes);
}

}  // namespace pathbench
