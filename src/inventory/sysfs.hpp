#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pathbench {

// Parsers take file contents; readers take a root so tests can point them at a fixture tree
// ("/" is the live system). Readers never throw for a missing or unreadable file: they return the
// parser's empty value, because a container or a VM may hide any of these files.

struct MemInfo {
  std::uint64_t mem_total_bytes = 0;
  std::uint64_t mem_available_bytes = 0;
  std::uint64_t mem_free_bytes = 0;  // MemFree: unused outright, unlike MemAvailable
  std::uint64_t cached_bytes = 0;    // Cached: the page cache (tmpfs and shmem included)
  std::uint64_t hugepages_total = 0;
  std::uint64_t hugepages_free = 0;
  std::uint64_t hugepage_bytes = 0;  // Hugepagesize (default huge page size)
};

struct ProcStatus {
  std::vector<int> cpus_allowed;  // Cpus_allowed_list
  std::vector<int> mems_allowed;  // Mems_allowed_list
};

// The page allocator's settings that decide how hard a transparent huge page fault tries for a
// free 2 MiB block (compacting in the fault path, or leaving it to khugepaged later); empty when
// hidden (a container) or absent (compaction_proactiveness is Linux 5.9+).
struct VmSettings {
  // /sys/kernel/mm/transparent_hugepage/khugepaged/*
  std::optional<std::int64_t> khugepaged_defrag, khugepaged_pages_to_scan,
      khugepaged_scan_sleep_millisecs, khugepaged_max_ptes_none;
  // /proc/sys/vm/*
  std::optional<std::int64_t> compaction_proactiveness, extfrag_threshold;
};

struct DmiBios {
  std::string vendor, version, date;
};

// /proc/meminfo; "kB" values become bytes, counts stay counts. Missing keys stay 0. Throws
// std::invalid_argument naming the key for a value that is not a number.
MemInfo parse_meminfo(std::string_view text);

// The bracketed choice of a sysfs selector such as "always [madvise] never" -> "madvise";
// "" when there is none.
std::string parse_bracketed_choice(std::string_view text);

// /proc/self/status; throws std::invalid_argument (from the list parser) on a malformed list.
ProcStatus parse_proc_status(std::string_view text);

// The CPU model from /proc/cpuinfo: "model name" (x86), else the first of the keys other
// architectures use; "" when none is present.
std::string parse_cpu_model(std::string_view cpuinfo);

// A file holding one integer (e.g. /proc/sys/kernel/numa_balancing); empty when not an integer.
std::optional<long long> parse_int(std::string_view text);

std::optional<std::string> read_file_if_present(const std::filesystem::path& path);

MemInfo read_meminfo(const std::filesystem::path& root = "/");
std::string read_thp_enabled(const std::filesystem::path& root = "/");
std::string read_thp_defrag(const std::filesystem::path& root = "/");
std::optional<int> read_numa_balancing(const std::filesystem::path& root = "/");
VmSettings read_vm_settings(const std::filesystem::path& root = "/");
ProcStatus read_proc_self_status(const std::filesystem::path& root = "/");
std::string read_cpu_model(const std::filesystem::path& root = "/");
DmiBios read_dmi_bios(const std::filesystem::path& root = "/");
// Online CPUs from /sys/devices/system/cpu/online; empty when unreadable.
std::vector<int> read_online_cpus(const std::filesystem::path& root = "/");

struct SysfsNumaNode {
  int id = 0;
  std::vector<int> cpus;
  std::uint64_t memory_bytes = 0;
};
// /sys/devices/system/node/node*/{cpulist,meminfo}, sorted by id; the fallback when hwloc cannot
// load a topology.
std::vector<SysfsNumaNode> read_sysfs_numa_nodes(const std::filesystem::path& root = "/");

// /sys/bus/pci/devices/<bus_id>/numa_node: empty when absent or -1 (firmware gave no locality).
std::optional<int> read_pci_numa_node(std::string_view bus_id,
                                      const std::filesystem::path& root = "/");
// /sys/bus/pci/devices/<bus_id>/local_cpulist; empty when absent.
std::vector<int> read_pci_local_cpus(std::string_view bus_id,
                                     const std::filesystem::path& root = "/");

// From uname(2): "Linux 6.8.0-49-generic x86_64".
std::string kernel_description();
std::string host_name();
// RLIMIT_MEMLOCK soft limit in bytes; UINT64_MAX when unlimited.
std::uint64_t memlock_limit_bytes();

}  // namespace pathbench
