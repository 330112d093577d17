#pragma once

// The fields RunContext models, listed once for its writer (run_context.cpp) and its reader
// (run_context_reader.cpp): visit(key, field, null) for each, in the order the writer appends
// keys that were not there. `Part` is the struct or its const form.

namespace pathbench::context_fields {

// Whether a field may be null. The inventory writes null for what it could not read (a PCIe link
// without NVML or nvidia-smi, a numa_balancing a container hides); a name or a count is never
// unknown.
enum class Null { kAllowed, kRefused };

template <typename Part, typename Visit>
void gpu(Part& g, Visit&& visit) {
  visit("index", g.index, Null::kRefused);
  visit("name", g.name, Null::kRefused);
  visit("uuid", g.uuid, Null::kRefused);
  visit("pci_bus_id", g.pci_bus_id, Null::kRefused);
  visit("vbios", g.vbios, Null::kRefused);
  visit("compute_capability", g.compute_capability, Null::kRefused);
  visit("ecc_mode", g.ecc_mode, Null::kAllowed);
  visit("persistence_mode", g.persistence_mode, Null::kAllowed);
  visit("mig_mode", g.mig_mode, Null::kAllowed);
  visit("pcie_gen_current", g.pcie_gen_current, Null::kAllowed);
  visit("pcie_gen_max", g.pcie_gen_max, Null::kAllowed);
  visit("pcie_width_current", g.pcie_width_current, Null::kAllowed);
  visit("pcie_width_max", g.pcie_width_max, Null::kAllowed);
  visit("numa_node", g.numa_node, Null::kAllowed);
  visit("clock_sm_mhz", g.clock_sm_mhz, Null::kAllowed);
  visit("clock_mem_mhz", g.clock_mem_mhz, Null::kAllowed);
  visit("clock_sm_max_mhz", g.clock_sm_max_mhz, Null::kAllowed);
  visit("clock_mem_max_mhz", g.clock_mem_max_mhz, Null::kAllowed);
  visit("memory_bytes", g.memory_bytes, Null::kRefused);
  visit("pcie_path", g.pcie_path, Null::kAllowed);
  visit("pcie_neighbors", g.pcie_neighbors, Null::kAllowed);
  visit("pcie_acs", g.pcie_acs, Null::kAllowed);
}

template <typename Part, typename Visit>
void nvlink(Part& n, Visit&& visit) {
  visit("active_links", n.active_links, Null::kRefused);
  visit("link_gb_per_s", n.link_gb_per_s, Null::kAllowed);
}

template <typename Part, typename Visit>
void link(Part& l, Visit&& visit) {
  visit("from", l.from, Null::kRefused);
  visit("to", l.to, Null::kRefused);
  visit("nvlinks", l.nvlinks, Null::kRefused);
  visit("type", l.type, Null::kRefused);
  visit("param", l.param, Null::kRefused);
}

template <typename Part, typename Visit>
void iommu(Part& i, Visit&& visit) {
  visit("mode", i.mode, Null::kRefused);
  visit("cmdline", i.cmdline, Null::kRefused);
}

// The context's own scalar fields before its parts (iommu, gpus, links).
template <typename Part, typename Visit>
void head(Part& c, Visit&& visit) {
  visit("tool_version", c.tool_version, Null::kRefused);
  visit("git_sha", c.git_sha, Null::kRefused);
  visit("hostname", c.hostname, Null::kRefused);
  visit("node_type", c.node_type, Null::kRefused);
  visit("topology_fingerprint", c.topology_fingerprint, Null::kRefused);
  visit("cpu_model", c.cpu_model, Null::kRefused);
  visit("driver_version", c.driver_version, Null::kRefused);
  visit("kernel", c.kernel, Null::kRefused);
  visit("bios_vendor", c.bios_vendor, Null::kRefused);
  visit("bios_version", c.bios_version, Null::kRefused);
  visit("bios_date", c.bios_date, Null::kRefused);
  visit("thp_enabled", c.thp_enabled, Null::kRefused);
  visit("thp_defrag", c.thp_defrag, Null::kRefused);
  visit("node_type_derived", c.node_type_derived, Null::kRefused);
  visit("cuda_runtime_version", c.cuda_runtime_version, Null::kAllowed);
  visit("cuda_driver_version", c.cuda_driver_version, Null::kAllowed);
  visit("numa_balancing", c.numa_balancing, Null::kAllowed);
  visit("hugepages_total", c.hugepages_total, Null::kRefused);
  visit("hugepages_free", c.hugepages_free, Null::kRefused);
  visit("hugepage_bytes", c.hugepage_bytes, Null::kRefused);
  visit("memlock_limit_bytes", c.memlock_limit_bytes, Null::kRefused);
  visit("cpuset", c.cpuset, Null::kRefused);
  visit("mems_allowed", c.mems_allowed, Null::kRefused);
  visit("cpuset_aligned_with_gpu", c.cpuset_aligned_with_gpu, Null::kAllowed);
  visit("khugepaged_defrag", c.khugepaged_defrag, Null::kAllowed);
  visit("khugepaged_pages_to_scan", c.khugepaged_pages_to_scan, Null::kAllowed);
  visit("khugepaged_scan_sleep_millisecs", c.khugepaged_scan_sleep_millisecs, Null::kAllowed);
  visit("khugepaged_max_ptes_none", c.khugepaged_max_ptes_none, Null::kAllowed);
  visit("compaction_proactiveness", c.compaction_proactiveness, Null::kAllowed);
  visit("extfrag_threshold", c.extfrag_threshold, Null::kAllowed);
}

// After the parts.
template <typename Part, typename Visit>
void tail(Part& c, Visit&& visit) {
  visit("device", c.device, Null::kRefused);
  visit("devices", c.devices, Null::kRefused);
}

}  // namespace pathbench::context_fields
