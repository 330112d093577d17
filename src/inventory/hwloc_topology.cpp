#include "inventory/hwloc_topology.hpp"
#include "inventory/cpulist.hpp"
#include "inventory/pcie_paths.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "inventory/nvidia_smi.hpp"
#include "inventory/sysfs.hpp"

namespace pathbench {
namespace {

void check(int rc, const char* call) {
  if (rc != 0) throw std::runtime_error(std::string("hwloc: ") + call + " failed");
}

struct PciAddress {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
};

PciAddress parse_address(std::string_view bus_id) {
  // The canonical form is fixed-width after the domain: "dddd:bb:dd.f".
  std::string canonical = normalize_pci_bus_id(bus_id);
  PciAddress address;
  auto colon = canonical.find(':');
  address.domain = static_cast<unsigned>(std::stoul(canonical.substr(0, colon), nullptr, 16));
  address.bus = static_cast<unsigned>(std::stoul(canonical.substr(colon + 1, 2), nullptr, 16));
  address.device = static_cast<unsigned>(std::stoul(canonical.substr(colon + 4, 2), nullptr, 16));
  address.function = static_cast<unsigned>(std::stoul(canonical.substr(colon + 7, 1), nullptr, 16));
  return address;
}

}  // namespace

std::vector<int> bitmap_to_vector(hwloc_const_bitmap_t bitmap) {
  std::vector<int> ids;
  if (bitmap == nullptr || hwloc_bitmap_weight(bitmap) < 0) return ids;
  for (int id = hwloc_bitmap_first(bitmap); id >= 0; id = hwloc_bitmap_next(bitmap, id)) {
    ids.push_back(id);
  }
  return ids;
}

HwlocTopology::HwlocTopology() {
  check(hwloc_topology_init(&topology_), "hwloc_topology_init");
  // From here on the destructor does not run if we throw, so clean up by hand.
  try {
    check(hwloc_topology_set_flags(topology_, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED),
          "hwloc_topology_set_flags");
    check(hwloc_topology_set_io_types_filter(topology_, HWLOC_TYPE_FILTER_KEEP_IMPORTANT),
          "hwloc_topology_set_io_types_filter");
    check(hwloc_topology_load(topology_), "hwloc_topology_load");
  } catch (...) {
    hwloc_topology_destroy(topology_);
    throw;
  }
}

HwlocTopology::HwlocTopology(HwlocTopology&& other) noexcept
    : topology_(std::exchange(other.topology_, nullptr)) {}

HwlocTopology& HwlocTopology::operator=(HwlocTopology&& other) noexcept {
  if (this != &other) {
    if (topology_ != nullptr) hwloc_topology_destroy(topology_);
    topology_ = std::exchange(other.topology_, nullptr);
  }
  return *this;
}

HwlocTopology::~HwlocTopology() {
  if (topology_ != nullptr) hwloc_topology_destroy(topology_);
}

std::vector<HwlocNumaNode> HwlocTopology::numa_nodes() const {
  std::vector<HwlocNumaNode> nodes;
  for (hwloc_obj_t obj = hwloc_get_next_obj_by_type(topology_, HWLOC_OBJ_NUMANODE, nullptr);
       obj != nullptr; obj = hwloc_get_next_obj_by_type(topology_, HWLOC_OBJ_NUMANODE, obj)) {
    HwlocNumaNode node;
    node.os_index = static_cast<int>(obj->os_index);
    node.cpus = bitmap_to_vector(obj->cpuset);
    node.memory_bytes = obj->attr != nullptr ? obj->attr->numanode.local_memory : 0;
    nodes.push_back(std::move(node));
  }
  std::sort(nodes.begin(), nodes.end(),
            [](const HwlocNumaNode& a, const HwlocNumaNode& b) { return a.os_index < b.os_index; });
  return nodes;
}

std::optional<PciLocality> HwlocTopology::pci_locality(std::string_view bus_id) const {
  PciAddress address = parse_address(bus_id);
  hwloc_obj_t device = hwloc_get_pcidev_by_busid(topology_, address.domain, address.bus,
                                                 address.device, address.function);
  if (device == nullptr) return std::nullopt;
  hwloc_obj_t ancestor = hwloc_get_non_io_ancestor_obj(topology_, device);
  if (ancestor == nullptr) return std::nullopt;
  // hwloc hangs devices without firmware locality off the root. With one NUMA node that is still
  // the truth; with several it would claim the device is local to all of them.
  if (ancestor == hwloc_get_root_obj(topology_) &&
      hwloc_get_nbobjs_by_type(topology_, HWLOC_OBJ_NUMANODE) > 1) {
    return std::nullopt;
  }
  PciLocality locality;
  locality.numa_nodes = bitmap_to_vector(ancestor->nodeset);
  locality.local_cpus = bitmap_to_vector(ancestor->cpuset);
  locality.source = "hwloc";
  return locality;
}

PciLocality pci_locality(const HwlocTopology* topology, std::string_view bus_id,
                         const std::filesystem::path& sysfs_root) {
  if (topology != nullptr) {
    if (auto found = topology->pci_locality(bus_id)) return *found;
  }
  PciLocality locality;
  if (auto node = read_pci_numa_node(bus_id, sysfs_root)) locality.numa_nodes = {*node};
  locality.local_cpus = read_pci_local_cpus(bus_id, sysfs_root);
  if (!locality.numa_nodes.empty() || !locality.local_cpus.empty()) locality.source = "sysfs";
  return locality;
}

void locate_gpus(Inventory& inventory, const HwlocTopology* topology,
                 const std::filesystem::path& sysfs_root) {
  const bool single_node = inventory.numa_nodes.size() == 1;
  for (auto& gpu : inventory.gpus) {
    PciLocality locality;
    if (!gpu.pci_bus_id.empty()) {
      try {
        locality = pci_locality(topology, gpu.pci_bus_id, sysfs_root);
      } catch (const std::exception& e) {
        inventory.warnings.push_back("locality of GPU " + std::to_string(gpu.index) +
                                     " unknown: " + e.what());
      }
    }
    if (locality.numa_nodes.size() == 1) {
      gpu.numa_node = locality.numa_nodes.front();
    } else if (locality.numa_nodes.size() > 1) {
      // hwloc attached the GPU above several nodes (e.g. a package split by SNC/NPS); the
      // kernel's own numa_node picks one of them.
      auto kernel_node = read_pci_numa_node(gpu.pci_bus_id, sysfs_root);
      bool listed = kernel_node && std::find(locality.numa_nodes.begin(), locality.numa_nodes.end(),
                                             *kernel_node) != locality.numa_nodes.end();
      gpu.numa_node = listed ? *kernel_node : locality.numa_nodes.front();
    } else if (single_node) {
      gpu.numa_node = inventory.numa_nodes.front().id;  // one node: every device is local to it
    }
    gpu.local_cpus = sorted_unique(locality.local_cpus);
    if (gpu.local_cpus.empty() && single_node) {
      gpu.local_cpus = sorted_unique(inventory.numa_nodes.front().cpus);
    }
    if (const auto path = read_pcie_device_path(gpu.pci_bus_id, sysfs_root)) {
      gpu.pcie_path = path->chain;
      gpu.pcie_neighbors = pcie_neighbors(*path, sysfs_root);
      gpu.pcie_acs = pcie_acs_states(*path, sysfs_root);
    }
  }
}

}  // namespace pathbench
