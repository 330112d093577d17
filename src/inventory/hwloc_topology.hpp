#pragma once

#include <hwloc.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inventory/inventory.hpp"

namespace pathbench {

struct HwlocNumaNode {
  int os_index = 0;
  std::vector<int> cpus;  // OS indexes of its PUs
  std::uint64_t memory_bytes = 0;
};

// Where a PCI device sits: the NUMA nodes and CPUs of its nearest non-I/O ancestor.
struct PciLocality {
  std::vector<int> numa_nodes;  // empty when unknown
  std::vector<int> local_cpus;  // empty when unknown
  std::string source;           // "hwloc", "sysfs" or "" (nothing known)
};

// Owns an hwloc topology of the whole machine (CPUs and nodes outside our cgroup included, so that
// the NUMA layout does not depend on how the job was bound), with the important PCI devices.
class HwlocTopology {
 public:
  // Throws std::runtime_error naming the failing hwloc call.
  HwlocTopology();
  HwlocTopology(const HwlocTopology&) = delete;
  HwlocTopology& operator=(const HwlocTopology&) = delete;
  HwlocTopology(HwlocTopology&& other) noexcept;
  HwlocTopology& operator=(HwlocTopology&& other) noexcept;
  ~HwlocTopology();

  // Sorted by OS index.
  std::vector<HwlocNumaNode> numa_nodes() const;

  // hwloc's view only: empty when the device is not in the tree, or when it hangs off the
  // machine root of a multi-node machine (firmware gave no locality, typical in VMs).
  // Throws std::invalid_argument for a malformed bus id.
  std::optional<PciLocality> pci_locality(std::string_view bus_id) const;

  hwloc_topology_t get() const { return topology_; }

 private:
  hwloc_topology_t topology_ = nullptr;
};

// hwloc's answer when it has one, else /sys/bus/pci/devices/<bus_id>/{numa_node,local_cpulist}
// under `sysfs_root`. `topology` may be null (hwloc failed to load).
PciLocality pci_locality(const HwlocTopology* topology, std::string_view bus_id,
                         const std::filesystem::path& sysfs_root = "/");

// Fills numa_node and local_cpus of every GPU in `inventory` (whose numa_nodes must be set):
// hwloc, then sysfs; on a one-node machine an unknown locality is that node. Where hwloc places a
// GPU above several nodes (SNC/NPS), the kernel's numa_node picks among them.
void locate_gpus(Inventory& inventory, const HwlocTopology* topology,
                 const std::filesystem::path& sysfs_root = "/");

// Every set bit of an hwloc bitmap; empty for a null or infinite bitmap.
std::vector<int> bitmap_to_vector(hwloc_const_bitmap_t bitmap);

}  // namespace pathbench
