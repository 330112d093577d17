#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pathbench {

// One mapping of /proc/<pid>/smaps with the fields pathbench needs.
struct SmapsEntry {
  std::uintptr_t start = 0, end = 0;
  std::uint64_t rss_kb = 0;
  std::uint64_t anon_huge_kb = 0;        // AnonHugePages (THP)
  std::uint64_t private_hugetlb_kb = 0;  // Private_Hugetlb
  std::uint64_t shared_hugetlb_kb = 0;   // Shared_Hugetlb
  std::uint64_t kernel_page_kb = 0;      // KernelPageSize
  std::uint64_t locked_kb = 0;           // Locked
  std::string vm_flags;                  // VmFlags
};

std::vector<SmapsEntry> parse_smaps(std::string_view text);

// Huge-page backing of [addr, addr+bytes): the fraction of the range's resident memory that is
// backed by THP or hugetlb pages.
struct HugeBacking {
  std::uint64_t resident_kb = 0;
  std::uint64_t huge_kb = 0;
  std::uint64_t kernel_page_kb = 0;
  bool hugetlb = false;
  double fraction() const { return resident_kb == 0 ? 0.0 : double(huge_kb) / double(resident_kb); }
  std::string describe() const;
};

// Sums the entries overlapping the range (smaps splits a mapping when its flags differ).
std::optional<HugeBacking> huge_backing_in(const std::vector<SmapsEntry>& entries,
                                           std::uintptr_t addr, std::uint64_t bytes);
// Reads /proc/self/smaps.
std::optional<HugeBacking> query_huge_backing(const void* addr, std::uint64_t bytes);

// Whether [addr, addr+bytes) is really locked: mlock returning 0 should mean VM_LOCKED ("lo" in
// VmFlags) on every VMA of the range; a sanitizer's no-op interceptor or a kernel that skips the
// VMA would otherwise go unnoticed.
struct LockState {
  int entries = 0;  // smaps entries overlapping the range
  int flagged = 0;  // of those, with VM_LOCKED
  std::uint64_t locked_kb = 0;
  bool locked() const { return entries > 0 && flagged == entries; }
  std::string describe() const;
};
LockState lock_state_in(const std::vector<SmapsEntry>& entries, std::uintptr_t addr,
                        std::uint64_t bytes);
LockState query_lock_state(const void* addr, std::uint64_t bytes);  // reads /proc/self/smaps

}  // namespace pathbench
