#include "result/run_context.hpp"

// RunContext::to_json: the modelled fields written over the context as it was read.

namespace pathbench {
namespace {

using ojson = nlohmann::ordered_json;

// Writes a modelled field over `j`; one equal to what is there keeps its exact JSON.
template <typename T>
void put(ojson& j, const char* key, const Recorded<T>& f) {
  if (!f.present) {
    j.erase(key);
    return;
  }
  ojson v = f.value ? ojson(*f.value) : ojson(nullptr);
  if (const auto it = j.find(key); it != j.end() && *it == v) return;
  j[key] = std::move(v);
}

ojson base_of(const ojson& raw) { return raw.is_object() ? raw : ojson::object(); }

ojson gpu_to_json(const GpuContext& g) {
  ojson j = base_of(g.raw);
  put(j, "index", g.index);
  for (auto [key, field] : {std::pair{"name", &g.name},
                            {"uuid", &g.uuid},
                            {"pci_bus_id", &g.pci_bus_id},
                            {"vbios", &g.vbios},
                            {"compute_capability", &g.compute_capability},
                            {"ecc_mode", &g.ecc_mode},
                            {"persistence_mode", &g.persistence_mode},
                            {"mig_mode", &g.mig_mode}}) {
    put(j, key, *field);
  }
  for (auto [key, field] : {std::pair{"pcie_gen_current", &g.pcie_gen_current},
                            {"pcie_gen_max", &g.pcie_gen_max},
                            {"pcie_width_current", &g.pcie_width_current},
                            {"pcie_width_max", &g.pcie_width_max},
                            {"numa_node", &g.numa_node},
                            {"clock_sm_mhz", &g.clock_sm_mhz},
                            {"clock_mem_mhz", &g.clock_mem_mhz},
                            {"clock_sm_max_mhz", &g.clock_sm_max_mhz},
                            {"clock_mem_max_mhz", &g.clock_mem_max_mhz}}) {
    put(j, key, *field);
  }
  put(j, "memory_bytes", g.memory_bytes);
  if (g.nvlink) {
    const auto it = j.find("nvlink");
    ojson n = it != j.end() && it->is_object() ? *it : ojson::object();
    put(n, "active_links", g.nvlink->active_links);
    put(n, "link_gb_per_s", g.nvlink->link_gb_per_s);
    j["nvlink"] = std::move(n);
  } else if (const auto it = j.find("nvlink"); it != j.end() && !it->is_null()) {
    *it = nullptr;
  }
  return j;
}

ojson link_to_json(const LinkContext& l) {
  ojson j = base_of(l.raw);
  put(j, "from", l.from);
  put(j, "to", l.to);
  put(j, "nvlinks", l.nvlinks);
  put(j, "type", l.type);
  put(j, "param", l.param);
  return j;
}

}  // namespace

ojson RunContext::to_json() const {
  ojson j = base_of(raw);
  for (auto [key, field] : {std::pair{"tool_version", &tool_version},
                            {"git_sha", &git_sha},
                            {"hostname", &hostname},
                            {"node_type", &node_type},
                            {"topology_fingerprint", &topology_fingerprint},
                            {"cpu_model", &cpu_model},
                            {"driver_version", &driver_version},
                            {"kernel", &kernel},
                            {"bios_vendor", &bios_vendor},
                            {"bios_version", &bios_version},
                            {"bios_date", &bios_date},
                            {"thp_enabled", &thp_enabled},
                            {"thp_defrag", &thp_defrag}}) {
    put(j, key, *field);
  }
  put(j, "node_type_derived", node_type_derived);
  put(j, "cuda_runtime_version", cuda_runtime_version);
  put(j, "cuda_driver_version", cuda_driver_version);
  put(j, "numa_balancing", numa_balancing);
  put(j, "hugepages_total", hugepages_total);
  put(j, "hugepages_free", hugepages_free);
  put(j, "hugepage_bytes", hugepage_bytes);
  put(j, "memlock_limit_bytes", memlock_limit_bytes);
  put(j, "cpuset", cpuset);
  put(j, "mems_allowed", mems_allowed);
  put(j, "cpuset_aligned_with_gpu", cpuset_aligned_with_gpu);
  if (iommu) {
    ojson i = base_of(iommu->raw);
    put(i, "mode", iommu->mode);
    put(i, "cmdline", iommu->cmdline);
    j["iommu"] = std::move(i);
  } else if (const auto it = j.find("iommu"); it != j.end() && !it->is_null()) {
    *it = nullptr;
  }
  if (j.contains("gpus") || !gpus.empty()) {
    ojson array = ojson::array();
    for (const auto& g : gpus) array.push_back(gpu_to_json(g));
    j["gpus"] = std::move(array);
  }
  if (j.contains("links") || !links.empty()) {
    ojson array = ojson::array();
    for (const auto& l : links) array.push_back(link_to_json(l));
    j["links"] = std::move(array);
  }
  put(j, "device", device);
  put(j, "devices", devices);
  if (environment) {
    if (const auto it = j.find("environment"); it == j.end() || *it != *environment) {
      j["environment"] = *environment;
    }
  } else {
    j.erase("environment");
  }
  return j;
}

const GpuContext* RunContext::gpu(int position) const {
  if (position < 0 || static_cast<std::size_t>(position) >= gpus.size()) return nullptr;
  return &gpus[static_cast<std::size_t>(position)];
}

}  // namespace pathbench
