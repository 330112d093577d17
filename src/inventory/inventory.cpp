#include "inventory/inventory.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <exception>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "build_info.hpp"
#include "cuda/cuda_probe.hpp"
#include "inventory/buddyinfo.hpp"
#include "inventory/cpulist.hpp"
#include "inventory/fingerprint.hpp"
#include "inventory/gpu_inventory.hpp"
#include "inventory/hwloc_topology.hpp"
#include "inventory/sysfs.hpp"

namespace pathbench {
namespace {

std::vector<int> intersect(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

std::vector<int> process_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

void collect_numa_nodes(Inventory& inventory, const HwlocTopology* topology) {
  if (topology != nullptr) {
    for (auto& node : topology->numa_nodes()) {
      inventory.numa_nodes.push_back(
          NumaNodeInventory{node.os_index, std::move(node.cpus), node.memory_bytes});
    }
  }
  if (inventory.numa_nodes.empty()) {
    for (auto& node : read_sysfs_numa_nodes()) {
      inventory.numa_nodes.push_back(
          NumaNodeInventory{node.id, std::move(node.cpus), node.memory_bytes});
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Inventory

Inventory collect_inventory(const InventoryOptions& options) {
  Inventory inventory;
  inventory.tool_version = build_info::kVersion;
  inventory.git_sha = build_info::kGitSha;
  inventory.hostname = host_name();
  inventory.kernel = kernel_description();
  inventory.cpu_model = read_cpu_model();

  auto online = read_online_cpus();
  inventory.logical_cpus = online.empty() ? static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN))
                                          : static_cast<int>(online.size());

  try {
    ProcStatus status = read_proc_self_status();
    inventory.cpuset = status.cpus_allowed;
    inventory.mems_allowed = status.mems_allowed;
  } catch (const std::invalid_argument& e) {
    inventory.warnings.push_back(std::string("/proc/self/status not understood: ") + e.what());
  }
  if (inventory.cpuset.empty()) inventory.cpuset = process_affinity();

  inventory.thp_enabled = read_thp_enabled();
  inventory.thp_defrag = read_thp_defrag();
  inventory.numa_balancing = read_numa_balancing();
  try {
    MemInfo memory = read_meminfo();
    inventory.mem_total_bytes = memory.mem_total_bytes;
    inventory.mem_available_bytes = memory.mem_available_bytes;
    inventory.mem_free_bytes = memory.mem_free_bytes;
    inventory.page_cache_bytes = memory.cached_bytes;
    inventory.hugepages_total = memory.hugepages_total;
    inventory.hugepages_free = memory.hugepages_free;
    inventory.hugepage_bytes = memory.hugepage_bytes;
  } catch (const std::invalid_argument& e) {
    inventory.warnings.push_back(std::string("/proc/meminfo not understood: ") + e.what());
  }
  inventory.memlock_limit_bytes = memlock_limit_bytes();
  inventory.vm_settings = read_vm_settings();
  try {
    inventory.free_memory = read_free_memory();
  } catch (const std::invalid_argument& e) {
    inventory.warnings.push_back(std::string("/proc/buddyinfo not understood: ") + e.what());
  }
  DmiBios bios = read_dmi_bios();
  inventory.bios_vendor = bios.vendor;
  inventory.bios_version = bios.version;
  inventory.bios_date = bios.date;
  inventory.iommu = read_iommu();
  inventory.gds = read_gds_state();

  std::optional<HwlocTopology> topology;
  try {
    topology.emplace();
  } catch (const std::exception& e) {
    inventory.warnings.push_back(std::string(e.what()) +
                                 "; NUMA layout read from sysfs, GPU locality from sysfs only");
  }
  const HwlocTopology* topology_ptr = topology ? &*topology : nullptr;
  collect_numa_nodes(inventory, topology_ptr);
  if (inventory.numa_nodes.size() == 1 && inventory.mem_total_bytes != 0) {
    // One node holds all memory. Some VMs (memory hot-added after boot) under-report the node's
    // own MemTotal and let it drift between runs, which would make the fingerprint drift too;
    // /proc/meminfo's total is the steady figure.
    inventory.numa_nodes.front().memory_bytes = inventory.mem_total_bytes;
  }

  CudaProbe probe;
  try {
    probe = probe_cuda();
  } catch (const std::exception& e) {
    probe.unavailable_reason = std::string("CUDA probe failed: ") + e.what();
  }
  inventory.cuda_runtime_version = probe.runtime_version;
  inventory.cuda_driver_version = probe.driver_version;
  inventory.cuda_unavailable_reason = probe.unavailable_reason;
  if (probe.devices.empty() && inventory.cuda_unavailable_reason.empty()) {
    inventory.cuda_unavailable_reason = "no CUDA device found";
  }

  collect_gpu_inventory(inventory, probe, options);
  locate_gpus(inventory, topology_ptr);
  check_gpu_alignment(inventory);

  if (!options.node_type_override.empty()) {
    inventory.node_type = options.node_type_override;
    inventory.node_type_derived = false;
  } else {
    inventory.node_type = derive_node_type(inventory);
    inventory.node_type_derived = true;
  }
  inventory.topology_fingerprint = topology_fingerprint(inventory);
  return inventory;
}

Machine machine_from(const Inventory& inventory) {
  Machine machine;
  const std::vector<int> cpuset = sorted_unique(inventory.cpuset);
  const std::vector<int> mems = sorted_unique(inventory.mems_allowed);
  std::vector<const NumaNodeInventory*> nodes;
  for (const auto& node : inventory.numa_nodes) nodes.push_back(&node);
  std::sort(nodes.begin(), nodes.end(), [](auto* a, auto* b) { return a->id < b->id; });
  for (const auto* node : nodes) {
    // Only nodes this process may allocate on; an empty list means "not known", not "none".
    if (node->memory_bytes == 0) continue;
    if (!mems.empty() && !std::binary_search(mems.begin(), mems.end(), node->id)) continue;
    machine.numa_nodes.push_back(node->id);
    std::vector<int> cpus = sorted_unique(node->cpus);
    machine.node_cpus.push_back(cpuset.empty() ? cpus : intersect(cpus, cpuset));
  }
  machine.mem_total_bytes = inventory.mem_total_bytes;
  machine.mem_available_bytes = inventory.mem_available_bytes;
  machine.hugetlb_free_pages = inventory.hugepages_free;
  if (inventory.hugepage_bytes != 0) machine.hugetlb_page_bytes = inventory.hugepage_bytes;
  machine.thp_enabled = inventory.thp_enabled;
  machine.numa_balancing = inventory.numa_balancing;
  machine.memlock_limit_bytes = inventory.memlock_limit_bytes;
  machine.cuda_unavailable_reason = inventory.cuda_unavailable_reason;
  for (const auto& gpu : inventory.gpus) {
    machine.gpus.push_back(
        MachineGpu{gpu.index, gpu.name, gpu.pci_bus_id, gpu.numa_node, gpu.memory_bytes});
    machine.selected_gpus.push_back(gpu.index);
  }
  std::sort(machine.selected_gpus.begin(), machine.selected_gpus.end());
  machine.links = inventory.links;
  return machine;
}

}  // namespace pathbench
