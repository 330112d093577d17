#pragma once

// The /proc/vmstat event counters that tell how transparent huge page faults fared: how often an
// allocation stalled in direct compaction and with what outcome, and how many THP faults got a
// huge page or fell back to 4 KiB pages. They count since boot, system-wide: what matters is
// their difference over a run or a sample.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

namespace pathbench {

// Each empty when the kernel does not count it (no CONFIG_COMPACTION, no THP).
struct VmCounters {
  std::optional<std::uint64_t> compact_stall, compact_fail, compact_success;
  std::optional<std::uint64_t> thp_fault_alloc, thp_fault_fallback;
};

using VmCounter = std::optional<std::uint64_t> VmCounters::*;

// The counters' /proc/vmstat names, listed once for the parser, the JSON writer and reader and
// the difference: visit(name, member) for each.
template <typename Visit>
void vm_counter_fields(Visit&& visit) {
  visit("compact_stall", &VmCounters::compact_stall);
  visit("compact_fail", &VmCounters::compact_fail);
  visit("compact_success", &VmCounters::compact_success);
  visit("thp_fault_alloc", &VmCounters::thp_fault_alloc);
  visit("thp_fault_fallback", &VmCounters::thp_fault_fallback);
}

// "name value" lines; other names are ignored. Throws std::invalid_argument naming the counter
// when one of these has a value that is not a number.
VmCounters parse_vmstat(std::string_view text);

// <root>/proc/vmstat; empty when the file is hidden. Throws as parse_vmstat does.
std::optional<VmCounters> read_vmstat(const std::filesystem::path& root = "/");

// end - start per counter; empty where either side lacks it or it went backwards (a counter
// that wrapped, or samples of two boots).
VmCounters vm_counter_difference(const VmCounters& start, const VmCounters& end);

}  // namespace pathbench
