#pragma once

// The plain fields of the inventory's context object, listed once for its writer
// (inventory_json.cpp) and its reader (inventory_from_json.cpp): visit(key, field) for each, in the
// order the writer emits them. Arrays of parts, enums and derived fields (PCIe and NVLink rates,
// decoded clock-event reasons) are written and read beside these tables.

namespace pathbench::inventory_fields {

template <typename Part, typename Visit>
void inventory(Part& i, Visit&& visit) {
  visit("tool_version", i.tool_version);
  visit("git_sha", i.git_sha);
  visit("hostname", i.hostname);
  visit("node_type", i.node_type);
  visit("node_type_derived", i.node_type_derived);
  visit("topology_fingerprint", i.topology_fingerprint);
  visit("cpu_model", i.cpu_model);
  visit("logical_cpus", i.logical_cpus);
  visit("cpuset", i.cpuset);
  visit("mems_allowed", i.mems_allowed);
  visit("cpuset_aligned_with_gpu", i.cpuset_aligned_with_gpu);
  visit("thp_enabled", i.thp_enabled);
  visit("thp_defrag", i.thp_defrag);
  visit("numa_balancing", i.numa_balancing);
  visit("hugepages_total", i.hugepages_total);
  visit("hugepages_free", i.hugepages_free);
  visit("hugepage_bytes", i.hugepage_bytes);
  visit("mem_total_bytes", i.mem_total_bytes);
  visit("mem_available_bytes", i.mem_available_bytes);
  visit("memlock_limit_bytes", i.memlock_limit_bytes);
  visit("khugepaged_defrag", i.vm_settings.khugepaged_defrag);
  visit("khugepaged_pages_to_scan", i.vm_settings.khugepaged_pages_to_scan);
  visit("khugepaged_scan_sleep_millisecs", i.vm_settings.khugepaged_scan_sleep_millisecs);
  visit("khugepaged_max_ptes_none", i.vm_settings.khugepaged_max_ptes_none);
  visit("compaction_proactiveness", i.vm_settings.compaction_proactiveness);
  visit("extfrag_threshold", i.vm_settings.extfrag_threshold);
  visit("mem_free_bytes", i.mem_free_bytes);
  visit("page_cache_bytes", i.page_cache_bytes);
  visit("kernel", i.kernel);
  visit("bios_vendor", i.bios_vendor);
  visit("bios_version", i.bios_version);
  visit("bios_date", i.bios_date);
  visit("cuda_runtime_version", i.cuda_runtime_version);
  visit("cuda_driver_version", i.cuda_driver_version);
  visit("driver_version", i.driver_version);
  visit("cuda_unavailable_reason", i.cuda_unavailable_reason);
  visit("nvidia_smi_status", i.nvidia_smi_status);
  visit("nvml_status", i.nvml_status);
  visit("inventory_source", i.inventory_source);
  visit("topo_status", i.topo_status);
  visit("nvlink_status", i.nvlink_status);
  visit("warnings", i.warnings);
}

template <typename Part, typename Visit>
void numa_node(Part& n, Visit&& visit) {
  visit("id", n.id);
  visit("cpus", n.cpus);
  visit("memory_bytes", n.memory_bytes);
}

// One element of free_memory (/proc/buddyinfo, per NUMA node).
template <typename Part, typename Visit>
void free_memory(Part& n, Visit&& visit) {
  visit("node", n.node);
  visit("free_bytes", n.free_bytes);
  visit("free_thp_block_bytes", n.free_thp_block_bytes);
}

template <typename Part, typename Visit>
void iommu(Part& i, Visit&& visit) {
  visit("mode", i.mode);
  visit("groups", i.groups);
  visit("cmdline", i.cmdline);
}

template <typename Part, typename Visit>
void gds(Part& g, Visit&& visit) {
  visit("library_found", g.library_found);
  visit("library", g.library);
  visit("nvidia_fs", g.nvidia_fs);
  visit("nvidia_fs_where", g.nvidia_fs_where);
  visit("compat_mode", g.compat_mode);
  visit("compat_source", g.compat_source);
}

template <typename Part, typename Visit>
void gpu(Part& g, Visit&& visit) {
  visit("index", g.index);
  visit("name", g.name);
  visit("uuid", g.uuid);
  visit("pci_bus_id", g.pci_bus_id);
  visit("pcie_gen_current", g.pcie_gen_current);
  visit("pcie_gen_max", g.pcie_gen_max);
  visit("pcie_width_current", g.pcie_width_current);
  visit("pcie_width_max", g.pcie_width_max);
  visit("numa_node", g.numa_node);
  visit("local_cpus", g.local_cpus);
  visit("pcie_path", g.pcie_path);
  visit("pcie_neighbors", g.pcie_neighbors);
  visit("pcie_acs", g.pcie_acs);
  visit("clock_sm_mhz", g.clock_sm_mhz);
  visit("clock_mem_mhz", g.clock_mem_mhz);
  visit("clock_sm_max_mhz", g.clock_sm_max_mhz);
  visit("clock_mem_max_mhz", g.clock_mem_max_mhz);
  visit("memory_bytes", g.memory_bytes);
  visit("vbios", g.vbios);
  visit("compute_capability", g.compute_capability);
  visit("ecc_mode", g.ecc_mode);
  visit("persistence_mode", g.persistence_mode);
  visit("mig_mode", g.mig_mode);
  visit("inventory_source", g.inventory_source);
  visit("clock_event_reasons_mask", g.clock_event_reasons_mask);
}

template <typename Part, typename Visit>
void nvlink(Part& n, Visit&& visit) {
  visit("active_links", n.active_links);
  visit("link_gb_per_s", n.link_gb_per_s);
  visit("version", n.version);
}

template <typename Part, typename Visit>
void nvlink_link(Part& l, Visit&& visit) {
  visit("link", l.link);
  visit("active", l.active);
  visit("version", l.version);
  visit("gb_per_s", l.gb_per_s);
  visit("remote_pci_bus_id", l.remote_pci_bus_id);
  visit("remote_type", l.remote_type);
}

// A GPU link's plain fields (its type is an enum, its p2p_status a sorted map).
template <typename Part, typename Visit>
void link(Part& l, Visit&& visit) {
  visit("from", l.from);
  visit("to", l.to);
  visit("nvlinks", l.nvlinks);
  visit("peer_access", l.peer_access);
  visit("performance_rank", l.performance_rank);
  visit("native_atomics", l.native_atomics);
  visit("param", l.param);
  visit("topology_source", l.topology_source);
  visit("common_ancestor", l.common_ancestor);
}

}  // namespace pathbench::inventory_fields
