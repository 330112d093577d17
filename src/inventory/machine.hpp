#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inventory/topology.hpp"

namespace pathbench {

// The facts about this node that decide which cases can run and where buffers go. Derived from
// the inventory; tests construct it directly.
struct MachineGpu {
  int index = 0;
  std::string name;
  std::string pci_bus_id;
  std::optional<int> numa_node;  // from hwloc via the PCI bus id; empty when the firmware hides it
  std::uint64_t memory_bytes = 0;
};

// Half of RAM: enough to show a host starving of reclaimable memory, and leaves the rest to the
// system and to the case's own buffers.
inline constexpr int kDefaultPinCapPct = 50;
// The highest cap `--max-pinned-pct` accepts: the host must keep some memory it can reclaim.
inline constexpr int kMaxPinCapPct = 90;

struct Machine {
  std::vector<int> numa_nodes;              // NUMA node ids with memory, sorted
  std::vector<std::vector<int>> node_cpus;  // parallel to numa_nodes: allowed CPUs of each node
  std::uint64_t mem_total_bytes = 0;        // /proc/meminfo MemTotal
  std::uint64_t mem_available_bytes = 0;    // /proc/meminfo MemAvailable
  std::uint64_t hugetlb_free_pages = 0;     // default huge page size pool
  std::uint64_t hugetlb_page_bytes = 2u << 20;
  std::string thp_enabled;                // "always" | "madvise" | "never" | "" (unknown)
  std::uint64_t memlock_limit_bytes = 0;  // RLIMIT_MEMLOCK soft limit; UINT64_MAX = unlimited
  std::string cuda_unavailable_reason;    // empty when at least one GPU can be used
  std::vector<MachineGpu> gpus;
  // Every ordered GPU pair's link (topology + driver), from the inventory; empty with one GPU.
  std::vector<GpuLink> links;
  // The GPUs the multi-GPU cases use (peer pairs, all-GPU copies): `run --devices`, by default
  // every GPU in `gpus`, sorted.
  std::vector<int> selected_gpus;
  // The most of MemTotal a case may pin to put the host under pressure, in percent: `run
  // --max-pinned-pct`, by default kDefaultPinCapPct. A case that asks for more is skipped, saying
  // so.
  int pin_cap_pct = kDefaultPinCapPct;
  // /proc/sys/kernel/numa_balancing when readable, and whether this run may change it for a case
  // (`run --allow-numa-balancing-change`): a system-wide setting is never changed unasked.
  std::optional<int> numa_balancing;
  bool numa_balancing_change_allowed = false;
  // Where the storage family writes its test files: `run --storage-dir`; empty means
  // ./.pathbench-storage (bench/storage.hpp).
  std::string storage_dir;

  bool has_gpu() const { return cuda_unavailable_reason.empty() && !gpus.empty(); }
  // Why GPU `device` cannot be used (no CUDA device, no such index), else nothing: the first
  // skip reason of every GPU family.
  std::optional<std::string> gpu_unavailable_reason(int device) const;
  const std::vector<int>* cpus_of_node(int node) const;
  // The node local to the GPU: hwloc's answer, or the only node when there is one.
  std::optional<int> gpu_local_node(int gpu_index) const;
  // Some node other than the GPU's local node, if the machine has one with memory.
  std::optional<int> gpu_remote_node(int gpu_index) const;
  // Some node other than the GPU's local node with CPUs this process may run on.
  std::optional<int> gpu_remote_cpu_node(int gpu_index) const;
  // The link from GPU `from` to GPU `to`, when the inventory has it.
  const GpuLink* link(int from, int to) const;
};

}  // namespace pathbench
