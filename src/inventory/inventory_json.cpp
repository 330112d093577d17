// The inventory as the result's context object (the writer; inventory_from_json.cpp reads it).
#include <algorithm>
#include <optional>
#include <utility>

#include "core/json_text.hpp"
#include "inventory/environment.hpp"
#include "inventory/inventory.hpp"
#include "inventory/link_rates.hpp"

namespace pathbench {
namespace {

nlohmann::ordered_json raw_pcie(std::optional<int> generation, std::optional<int> width) {
  if (!generation || !width) return nullptr;
  return optional_json(pcie_raw_gb_per_s(*generation, *width));
}

// Derived from the link state, never read back: link_rates.hpp is the one place that knows a
// generation's rate, and the field is here so that readers without that table (the report
// scripts, a fleet's dashboards) need none.
nlohmann::ordered_json pcie_json(const GpuInventory& gpu) {
  nlohmann::ordered_json rate;
  rate["current"] = raw_pcie(gpu.pcie_gen_current, gpu.pcie_width_current);
  rate["max"] = raw_pcie(gpu.pcie_gen_max, gpu.pcie_width_max);
  nlohmann::ordered_json j;
  j["raw_gbps_per_direction"] = std::move(rate);
  return j;
}

nlohmann::ordered_json nvlink_json(const GpuNvlink& nvlink, const std::string& compute_capability) {
  nlohmann::ordered_json n;
  n["active_links"] = nvlink.active_links;
  n["link_gb_per_s"] = optional_json(nvlink.link_gb_per_s);
  n["version"] = optional_json(nvlink.version);
  // The data rate the NVLink floors hold a pair to (inventory/nvlink.hpp), derived like the PCIe
  // rate: per link and direction, and over all active links.
  const auto rate = nvlink.active_links > 0
                        ? nvlink_link_rate(nvlink.link_gb_per_s, compute_capability, nvlink.version)
                        : std::nullopt;
  n["data_gb_per_s_per_link"] = rate ? nlohmann::ordered_json(rate->gb_per_s) : nullptr;
  n["raw_gbps_per_direction"] =
      rate ? nlohmann::ordered_json(rate->gb_per_s * nvlink.active_links) : nullptr;
  auto& links = n["links"] = nlohmann::ordered_json::array();
  for (const auto& link : nvlink.links) {
    nlohmann::ordered_json l;
    l["link"] = link.link;
    l["active"] = link.active;
    l["version"] = optional_json(link.version);
    l["gb_per_s"] = optional_json(link.gb_per_s);
    l["remote_pci_bus_id"] = link.remote_pci_bus_id;
    l["remote_type"] = link.remote_type;
    links.push_back(std::move(l));
  }
  return n;
}

nlohmann::ordered_json gpu_json(const GpuInventory& gpu) {
  nlohmann::ordered_json j;
  j["index"] = gpu.index;
  j["name"] = gpu.name;
  j["uuid"] = gpu.uuid;
  j["pci_bus_id"] = gpu.pci_bus_id;
  j["pcie_gen_current"] = optional_json(gpu.pcie_gen_current);
  j["pcie_gen_max"] = optional_json(gpu.pcie_gen_max);
  j["pcie_width_current"] = optional_json(gpu.pcie_width_current);
  j["pcie_width_max"] = optional_json(gpu.pcie_width_max);
  j["numa_node"] = optional_json(gpu.numa_node);
  j["local_cpus"] = gpu.local_cpus;
  j["clock_sm_mhz"] = optional_json(gpu.clock_sm_mhz);
  j["clock_mem_mhz"] = optional_json(gpu.clock_mem_mhz);
  j["clock_sm_max_mhz"] = optional_json(gpu.clock_sm_max_mhz);
  j["clock_mem_max_mhz"] = optional_json(gpu.clock_mem_max_mhz);
  j["memory_bytes"] = gpu.memory_bytes;
  j["vbios"] = gpu.vbios;
  j["compute_capability"] = gpu.compute_capability;
  j["ecc_mode"] = optional_json(gpu.ecc_mode);
  j["persistence_mode"] = optional_json(gpu.persistence_mode);
  j["mig_mode"] = optional_json(gpu.mig_mode);
  j["nvlink"] = gpu.nvlink ? nvlink_json(*gpu.nvlink, gpu.compute_capability) : nullptr;
  j["inventory_source"] = gpu.inventory_source;
  j["pcie"] = pcie_json(gpu);
  j["clock_event_reasons_mask"] = optional_json(gpu.clock_event_reasons_mask);
  j["clock_event_reasons"] =
      gpu.clock_event_reasons_mask
          ? nlohmann::ordered_json(decode_clock_event_reasons(*gpu.clock_event_reasons_mask))
          : nullptr;
  return j;
}

nlohmann::ordered_json link_json(const GpuLink& link) {
  nlohmann::ordered_json j;
  j["from"] = link.from;
  j["to"] = link.to;
  j["type"] = link_type_name(link.type);
  j["nvlinks"] = link.nvlinks;
  j["peer_access"] = optional_json(link.peer_access);
  j["performance_rank"] = optional_json(link.performance_rank);
  j["native_atomics"] = optional_json(link.native_atomics);
  j["param"] = link.param;
  j["topology_source"] = link.topology_source;
  j["common_ancestor"] = optional_json(link.common_ancestor);
  if (link.p2p_status.empty()) {
    j["p2p_status"] = nullptr;
  } else {
    // By name: the reader's objects are sorted, and a context must survive its own round trip.
    auto statuses = link.p2p_status;
    std::sort(statuses.begin(), statuses.end());
    auto& p2p = j["p2p_status"] = nlohmann::ordered_json::object();
    for (const auto& [capability, status] : statuses) p2p[capability] = status;
  }
  return j;
}

}  // namespace

nlohmann::ordered_json to_json(const Inventory& inventory) {
  nlohmann::ordered_json j;
  j["tool_version"] = inventory.tool_version;
  j["git_sha"] = inventory.git_sha;
  j["hostname"] = inventory.hostname;
  j["node_type"] = inventory.node_type;
  j["node_type_derived"] = inventory.node_type_derived;
  j["topology_fingerprint"] = inventory.topology_fingerprint;
  j["cpu_model"] = inventory.cpu_model;
  j["logical_cpus"] = inventory.logical_cpus;
  auto& nodes = j["numa_nodes"] = nlohmann::ordered_json::array();
  for (const auto& node : inventory.numa_nodes) {
    nlohmann::ordered_json n;
    n["id"] = node.id;
    n["cpus"] = node.cpus;
    n["memory_bytes"] = node.memory_bytes;
    nodes.push_back(std::move(n));
  }
  j["cpuset"] = inventory.cpuset;
  j["mems_allowed"] = inventory.mems_allowed;
  j["cpuset_aligned_with_gpu"] = inventory.cpuset_aligned_with_gpu
                                     ? nlohmann::ordered_json(*inventory.cpuset_aligned_with_gpu)
                                     : nlohmann::ordered_json(nullptr);
  j["thp_enabled"] = inventory.thp_enabled;
  j["thp_defrag"] = inventory.thp_defrag;
  j["numa_balancing"] = optional_json(inventory.numa_balancing);
  j["hugepages_total"] = inventory.hugepages_total;
  j["hugepages_free"] = inventory.hugepages_free;
  j["hugepage_bytes"] = inventory.hugepage_bytes;
  j["mem_total_bytes"] = inventory.mem_total_bytes;
  j["mem_available_bytes"] = inventory.mem_available_bytes;
  j["memlock_limit_bytes"] = inventory.memlock_limit_bytes;
  j["kernel"] = inventory.kernel;
  j["bios_vendor"] = inventory.bios_vendor;
  j["bios_version"] = inventory.bios_version;
  j["bios_date"] = inventory.bios_date;
  nlohmann::ordered_json iommu;
  iommu["mode"] = inventory.iommu.mode;
  iommu["groups"] = inventory.iommu.groups;
  iommu["cmdline"] = inventory.iommu.cmdline;
  j["iommu"] = std::move(iommu);
  j["cuda_runtime_version"] = optional_json(inventory.cuda_runtime_version);
  j["cuda_driver_version"] = optional_json(inventory.cuda_driver_version);
  j["driver_version"] = inventory.driver_version;
  j["cuda_unavailable_reason"] = inventory.cuda_unavailable_reason;
  j["nvidia_smi_status"] = inventory.nvidia_smi_status;
  j["nvml_status"] = inventory.nvml_status;
  j["inventory_source"] = inventory.inventory_source;
  auto& gpus = j["gpus"] = nlohmann::ordered_json::array();
  for (const auto& gpu : inventory.gpus) gpus.push_back(gpu_json(gpu));
  j["topo_status"] = inventory.topo_status;
  auto& links = j["links"] = nlohmann::ordered_json::array();
  for (const auto& link : inventory.links) links.push_back(link_json(link));
  j["nvlink_status"] = inventory.nvlink_status;
  j["warnings"] = inventory.warnings;
  return j;
}

}  // namespace pathbench
